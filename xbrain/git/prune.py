"""What history holds, for purge: walking it, the remotes that hold old history, and
removing what nothing reaches any more.

``prune`` puts every object still reachable into one new pack first, and only then
deletes the loose objects and the other packs, so a crash at any instant leaves a
readable store. A remote that still holds purged history keeps a lease (the commit it
held) in the config until ``push(name, lease)`` replaced it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from dulwich.objects import Commit, ShaFile, Tree
from dulwich.refs import Ref

from .midx import drop_midx
from .objects import DIR_MODE, CommitId, config_change, load_object, private_umask
from .upkeeplock import upkeep_lock
from .writing import Writer

__all__ = ["Pruner"]


class Pruner(Writer):
    """History walks, purge leases and pruning."""

    def _topological(self, head: bytes) -> list[bytes]:
        """Commits reachable from ``head``, parents before children."""
        order: list[bytes] = []
        seen: set[bytes] = set()
        stack: list[tuple[bytes, bool]] = [(head, False)]
        while stack:
            sha, done = stack.pop()
            if done:
                order.append(sha)
                continue
            if sha in seen:
                continue
            seen.add(sha)
            stack.append((sha, True))
            commit = load_object(self._repo, sha)
            assert isinstance(commit, Commit)
            stack += [(bytes(p), False) for p in commit.parents if bytes(p) not in seen]
        return order

    def remote_refs(self) -> dict[str, CommitId]:
        """Every remote-tracking ref (``refs/remotes/NAME/main``) by remote name."""
        out = {}
        for ref in self._repo.refs.allkeys():
            name = bytes(ref)
            if name.startswith(b"refs/remotes/") and name.endswith(b"/main"):
                out[name[13:-5].decode()] = CommitId(self._repo.refs[ref].decode())
        return out

    def reaches(self, head: CommitId, commits: set[str]) -> bool:
        """True when any of ``commits`` is reachable from ``head``."""
        return any(sha.decode() in commits for sha in self._topological(head.encode()))

    def forget_remote(self, name: str, lease: CommitId) -> None:
        """Drop ``refs/remotes/NAME/main`` (the remote still holds the history a purge
        removed) and remember ``lease``, the commit the remote held, for the one push
        that may replace it (``push(name, lease=…)``)."""
        with config_change():
            config = self._repo.get_config()
            config.set((b"xbrain-purge", name.encode()), b"lease", lease.encode())
            config.write_to_path()
        ref = Ref(b"refs/remotes/" + name.encode() + b"/main")
        with private_umask():
            self._repo.refs.remove_if_equals(ref, None)

    def purge_lease(self, name: str) -> CommitId | None:
        """The commit remote ``name`` held when a purge removed it, or None."""
        try:
            value = self._repo.get_config().get((b"xbrain-purge", name.encode()), b"lease")
        except KeyError:
            return None
        return CommitId(value.decode())

    def clear_purge_lease(self, name: str) -> None:
        """Forget the lease once the rewritten history reached remote ``name``."""
        with config_change():
            config = self._repo.get_config()
            section = (b"xbrain-purge", name.encode())
            if config.has_section(section):
                del config[section]
                config.write_to_path()

    def trailer_values(self, head: CommitId, key: str, known: Callable[[str], bool]) -> list[str]:
        """The values of trailer ``key`` in the commits reachable from ``head``, not
        walking past commits ``known`` says are already here."""
        found = []
        prefix = f"{key}: ".encode()
        stack, seen = [head.encode()], set()
        while stack:
            sha = stack.pop()
            if sha in seen or known(sha.decode()):
                continue
            seen.add(sha)
            commit = load_object(self._repo, sha)
            assert isinstance(commit, Commit)
            for line in commit.message.splitlines():
                if line.startswith(prefix):
                    found.append(line[len(prefix) :].decode("ascii", "replace").strip())
            stack += [bytes(p) for p in commit.parents]
        return found

    def prune(self) -> int:
        """Keep only what ``main`` and the remaining refs reach: one new pack of it, then
        every loose object and older pack deleted, reflogs cleared. Objects removed.
        Waits for a pack merge running beside it (it could bring back what this drops)."""
        with upkeep_lock(self.control_dir, wait=True):
            return self._prune()

    def _prune(self) -> int:
        roots = [
            bytes(self._repo.refs[ref])
            for ref in self._repo.refs.allkeys()
            if ref != b"HEAD" and bytes(ref).startswith(b"refs/")
        ]
        keep: dict[bytes, ShaFile] = {}
        for root in roots:
            for sha in self._topological(root):
                commit = load_object(self._repo, sha)
                keep[sha] = commit
                assert isinstance(commit, Commit)
                self._collect_tree(bytes(commit.tree), keep)
        store = self._repo.object_store
        objects_dir = Path(os.fsdecode(store.path))
        before = {p for p in objects_dir.glob("pack/pack-*.pack")}
        loose = [p for p in objects_dir.glob("[0-9a-f][0-9a-f]/*") if p.is_file()]
        with private_umask():
            if keep:
                store.add_objects([(obj, None) for obj in keep.values()])
        new_packs = set(objects_dir.glob("pack/pack-*.pack")) - before
        removed = 0
        for path in loose:
            path.unlink(missing_ok=True)
            removed += 1
        if new_packs:  # git's multi-pack-index naming a pack removed: removed first
            drop_midx(objects_dir / "pack", [pack.stem for pack in before])
        for pack in before if new_packs else ():  # (none new: an identical pack holds all)
            for sibling in pack.parent.glob(pack.stem + ".*"):
                sibling.unlink(missing_ok=True)
        for log in Path(self._repo.controldir(), "logs").rglob("*"):
            if log.is_file():
                log.write_bytes(b"")
        return removed

    def objects_holding(self, needles: list[bytes]) -> int:
        """How many objects of the repository (loose or packed, reachable or not) hold
        any of ``needles`` in their raw bytes: the proof a purge ends with."""
        if not needles:
            return 0
        count = 0
        for sha in self._repo.object_store:
            data = load_object(self._repo, bytes(sha)).as_raw_string()
            count += any(needle in data for needle in needles)
        return count

    def _collect_tree(self, sha: bytes, keep: dict[bytes, ShaFile]) -> None:
        if sha in keep:
            return
        tree = load_object(self._repo, sha)
        assert isinstance(tree, Tree)
        keep[sha] = tree
        for item in tree.iteritems():
            if item.mode == DIR_MODE:
                self._collect_tree(bytes(item.sha), keep)
            elif item.sha not in keep:
                keep[bytes(item.sha)] = load_object(self._repo, item.sha)
