"""The only module that imports dulwich: commits, reads, refs and the working tree.

Invariants:

* The committed tree at ``refs/heads/main`` is the truth. A write builds blobs and trees
  straight into the object store, then moves ``main`` by compare-and-swap from the commit
  it started from. A crash before the ref moves leaves only unreachable objects.
* After the ref moves, the touched working-tree files and their git-index entries are
  refreshed. A marker file under ``.git/xbrain/`` names those paths until that is done,
  so the next write (or ``doctor --repair``) finishes the job after a crash.
* Everything created under the store is private: writes run with umask 077.
* dulwich types and exceptions never leave this module; paths are ``str`` outside and
  UTF-8 ``bytes`` inside.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import shutil
import stat
import tempfile
import time
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NewType, cast

from dulwich.errors import (
    ApplyDeltaError,
    ChecksumMismatch,
    FileFormatException,
    NotGitRepository,
    ObjectFormatException,
)
from dulwich.file import FileLocked
from dulwich.object_store import iter_tree_contents
from dulwich.objects import Blob, Commit, ObjectID, ShaFile, Tree
from dulwich.refs import Ref
from dulwich.repo import Repo

from . import gitindex
from .errors import (
    BusyError,
    ConflictError,
    CorruptStoreError,
    InvalidInputError,
    NotFoundError,
    ProviderError,
    XbrainError,
)
from .paths import path_problem

__all__ = ["CommitId", "CommitInfo", "GitStore", "Leaf", "Snapshot", "private_umask"]

CommitId = NewType("CommitId", str)

MAIN = Ref(b"refs/heads/main")
FILE_MODE = 0o100644
DIR_MODE = 0o040000
MAX_DEPTH = 8  # deeper than any path of the layout; bounds the walk of a hostile tree
_PACK_THRESHOLD = 64  # more new objects than this go into one pack, not loose files
_MARKER = "xbrain/worktree-pending.json"
_ANCESTRY = re.compile(r"(?:[~^]\d{0,6})+$")
WORKTREE_TEMP = ".xbrain-tmp"


_DAMAGE = (
    ApplyDeltaError,
    ChecksumMismatch,
    FileFormatException,
    ObjectFormatException,
    zlib.error,
    ValueError,
    EOFError,
)


def _load(repo: Repo, sha: bytes) -> ShaFile:
    """One object by id; damage or absence becomes CorruptStoreError (never dulwich's)."""
    try:
        return repo.object_store[ObjectID(sha)]
    except KeyError:
        raise CorruptStoreError(
            f"Git object {sha.decode()} is missing; run xbrain doctor."
        ) from None
    except _DAMAGE as exc:
        raise CorruptStoreError(
            f"Git object {sha.decode()} is damaged; run xbrain doctor."
        ) from exc


def _disk_full() -> XbrainError:
    return XbrainError("The disk is full (no space left on device); nothing was committed.")


def _remote_failure(action: str, location: str, exc: BaseException) -> ProviderError:
    """One line for a failed network operation; never echoes credentials."""
    from .urls import redact_url

    text = " ".join(str(exc).split())
    detail = text if 0 < len(text) <= 160 else type(exc).__name__
    return ProviderError(redact_url(f"Could not {action} {location}: {detail}".rstrip(".") + "."))


@contextlib.contextmanager
def private_umask() -> Iterator[None]:
    """Create every file 0600 / directory 0700 (including git's own) inside the block."""
    old = os.umask(0o077)
    try:
        yield
    finally:
        os.umask(old)


@dataclass(frozen=True)
class CommitInfo:
    """One commit as plain data."""

    id: CommitId
    parents: tuple[CommitId, ...]
    author: str
    time: int
    message: str


@dataclass(frozen=True)
class Leaf:
    """One non-directory entry of a tree: raw name components, git mode, object id."""

    parts: tuple[bytes, ...]
    mode: int
    sha: str


class Snapshot:
    """Read-only view of one commit's tree, with a small tree cache."""

    def __init__(self, repo: Repo, commit: CommitId | None) -> None:
        self._repo = repo
        self.commit = commit
        self._trees: dict[bytes, Tree] = {}
        self.tree_id: bytes | None = None
        if commit is not None:
            obj = _load(repo, commit.encode())
            if not isinstance(obj, Commit):
                raise CorruptStoreError(f"{commit} is not a commit.")
            self.tree_id = obj.tree

    def _tree(self, sha: bytes) -> Tree:
        tree = self._trees.get(sha)
        if tree is None:
            obj = _load(self._repo, sha)
            if not isinstance(obj, Tree):
                raise CorruptStoreError("Store tree is damaged; run xbrain doctor.")
            tree = self._trees[sha] = obj
        return tree

    def _entry(self, path: str) -> tuple[int, bytes] | None:
        if self.tree_id is None:
            return None
        mode, sha = DIR_MODE, self.tree_id
        for part in path.encode().split(b"/"):
            if mode != DIR_MODE:
                return None
            tree = self._tree(sha)
            if part not in tree:
                return None
            mode, sha = tree[part]
        return mode, sha

    def read(self, path: str) -> bytes | None:
        """The bytes of a file at this commit, or None when absent."""
        entry = self._entry(path)
        if entry is None or entry[0] == DIR_MODE:
            return None
        obj = _load(self._repo, entry[1])
        if not isinstance(obj, Blob):
            raise CorruptStoreError(f"{path} is not a file; run xbrain doctor.")
        return bytes(obj.data)

    def blob_id(self, path: str) -> str | None:
        """The blob id of a file at this commit, or None."""
        entry = self._entry(path)
        return None if entry is None or entry[0] == DIR_MODE else entry[1].decode()

    def listdir(self, path: str) -> list[str]:
        """Names directly under a directory (empty when absent)."""
        entry = (DIR_MODE, self.tree_id) if path == "" else self._entry(path)
        if entry is None or entry[0] != DIR_MODE or entry[1] is None:
            return []
        return [name.decode() for name in self._tree(entry[1])]

    def files(self, prefix: str = "") -> Iterator[tuple[str, str]]:
        """Every file ``(path, blob_id)`` under ``prefix`` (the whole tree when empty)."""
        entry = (DIR_MODE, self.tree_id) if prefix == "" else self._entry(prefix)
        if entry is None or entry[0] != DIR_MODE or entry[1] is None:
            return
        base = prefix + "/" if prefix else ""
        for item in iter_tree_contents(self._repo.object_store, ObjectID(entry[1])):
            yield base + item.path.decode(), item.sha.decode()

    def blob(self, blob_id: str) -> bytes:
        """Raw bytes of a blob by id."""
        obj = _load(self._repo, blob_id.encode())
        if not isinstance(obj, Blob):
            raise CorruptStoreError(f"{blob_id} is not a file; run xbrain doctor.")
        return bytes(obj.data)


class GitStore:
    """A git repository with a working tree, driven only through dulwich."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self._repo = Repo(str(path))
        except NotGitRepository:
            raise CorruptStoreError(f"Not an xbrain store: {path}") from None
        self._pack_indexes: list[tuple[Path, Any]] | None = None
        # Objects are fsynced before the ref moves (dulwich's knob; git reads core.fsync).
        store = self._repo.object_store
        if hasattr(store, "fsync_object_files"):
            store.fsync_object_files = True

    # -- lifecycle -------------------------------------------------------------------------

    @staticmethod
    def create(
        path: Path, files: Mapping[str, bytes], message: str, identity: str, when: int
    ) -> bool:
        """Create a store with one root commit; False if another process got there first.

        The repository is built in a sibling temp directory and renamed into place, so a
        half-initialized store is never visible and a crash leaves only the temp dir.
        """
        with private_umask():  # new parent directories are 0700 too (mkdir -p ignores mode)
            path.parent.mkdir(parents=True, exist_ok=True)
            temp = Path(tempfile.mkdtemp(prefix=f".{path.name}.init-", dir=path.parent))
            try:
                GitStore.init_private(temp)
                store = GitStore(temp)
                try:
                    commit = store.commit(None, dict(files), message, identity, when)
                    store.refresh_worktree(commit, list(files))
                finally:
                    store.close()
                try:
                    os.rename(temp, path)
                except OSError:
                    if path.is_dir() and any(path.iterdir()):
                        return False
                    raise
                return True
            finally:
                shutil.rmtree(temp, ignore_errors=True)

    @staticmethod
    def init_private(path: Path) -> None:
        """An empty repository with a working tree, branch ``main`` and private settings."""
        with private_umask():
            repo = Repo.init(str(path), default_branch=b"main")
            try:
                config = repo.get_config()
                # git's own writes (status, gc) stay private too
                config.set((b"core",), b"sharedRepository", b"0600")
                config.set((b"core",), b"fsync", b"objects,reference")
                config.set((b"gc",), b"auto", b"0")
                config.set((b"gc",), b"autoDetach", False)
                config.write_to_path()
            finally:
                repo.close()

    @staticmethod
    def init_bare(path: Path) -> None:
        """An empty, private bare repository (a backup target on a local disk)."""
        with private_umask():
            Repo.init_bare(str(path), mkdir=True, default_branch=b"main").close()

    def close(self) -> None:
        """Release the repository's file handles."""
        for _, index in self._pack_indexes or ():
            index.close()
        self._pack_indexes = None
        self._repo.close()

    def __enter__(self) -> GitStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def control_dir(self) -> Path:
        """The ``.git`` directory."""
        return Path(self._repo.controldir())

    # -- reading ---------------------------------------------------------------------------

    def head(self) -> CommitId | None:
        """The commit ``main`` points at, or None for an unborn branch."""
        try:
            sha = self._repo.refs[MAIN]
        except KeyError:
            return None
        return CommitId(sha.decode())

    def snapshot(self, commit: CommitId | None = None) -> Snapshot:
        """A read view of ``commit`` (default: the current head)."""
        return Snapshot(self._repo, self.head() if commit is None else commit)

    def commit_info(self, commit: CommitId) -> CommitInfo:
        """Metadata of one commit."""
        try:
            obj = _load(self._repo, commit.encode())
        except CorruptStoreError:
            if ObjectID(commit.encode()) not in self._repo.object_store:
                raise NotFoundError(f"Unknown commit: {commit}") from None
            raise
        if not isinstance(obj, Commit):
            raise NotFoundError(f"Unknown commit: {commit}")
        return CommitInfo(
            id=commit,
            parents=tuple(CommitId(p.decode()) for p in obj.parents),
            author=obj.author.decode("utf-8", "replace"),
            time=obj.commit_time,
            message=obj.message.decode("utf-8", "replace"),
        )

    def resolve(self, rev: str) -> CommitId:
        """A commit from a revision: full or short id, ``main``, ``HEAD``, ``main~2``.

        ``~N`` and ``^N`` also follow a short id (``1a2b3c~1``), which dulwich's parser
        does not: the base is resolved first, then parents are walked.
        """
        from dulwich.objectspec import parse_commit, parse_object

        suffix = _ANCESTRY.search(rev)
        if suffix and suffix.start() > 0:
            commit = self.resolve(rev[: suffix.start()])
            for op, count in re.findall(r"([~^])(\d*)", suffix.group(0)):
                steps, nth = (int(count or 1), 1) if op == "~" else (1, int(count or 1))
                for _ in range(steps):
                    parents = self.commit_info(commit).parents
                    if len(parents) < nth:
                        raise NotFoundError(f"Unknown revision: {rev}")
                    commit = parents[nth - 1]
            return commit
        obj: ShaFile | None = None
        for parse in (parse_commit, parse_object):  # short ids / ~N and ^N
            try:
                obj = parse(self._repo, rev.encode())
                break
            except (KeyError, ValueError, NotImplementedError, *_DAMAGE):
                continue
        if obj is None:
            raise NotFoundError(f"Unknown revision: {rev}")
        if not isinstance(obj, Commit):
            raise NotFoundError(f"Not a commit: {rev}")
        return CommitId(obj.id.decode())

    def has_commit(self, commit: str) -> bool:
        """True when ``commit`` names a commit in this repository."""
        try:
            return isinstance(_load(self._repo, commit.encode()), Commit)
        except CorruptStoreError:
            return False

    def changed_files(self, old: CommitId | None, new: CommitId, prefix: str = "") -> list[str]:
        """Paths under ``prefix`` (default: anywhere) that differ between two commits.

        A tree diff pruned by identical subtrees: its cost follows what changed.
        """
        from dulwich.diff_tree import tree_changes

        def tree(commit: CommitId | None) -> bytes | None:
            snap = Snapshot(self._repo, commit)
            if prefix == "":
                return snap.tree_id
            entry = snap._entry(prefix)
            return entry[1] if entry and entry[0] == DIR_MODE else None

        old_tree, new_tree = tree(old), tree(new)
        base = prefix + "/" if prefix else ""
        paths = set()
        for change in tree_changes(
            self._repo.object_store,
            ObjectID(old_tree) if old_tree else None,
            ObjectID(new_tree) if new_tree else None,
        ):
            for entry in (change.old, change.new):
                if entry is not None and entry.path is not None:
                    paths.add(base + entry.path.decode("utf-8", "surrogateescape"))
        return sorted(paths)

    def last_change(self, path: str, limit: int = 100_000) -> CommitId | None:
        """The newest commit on ``main``'s first-parent line that changed ``path``.

        A walk that stops at the change (one tree lookup a commit), for messages that
        name a commit without building the history table.
        """
        commit = self.head()
        if commit is None:
            return None
        blob = self.snapshot(commit).blob_id(path)
        for _ in range(limit):
            parents = self.commit_info(commit).parents
            if not parents or self.snapshot(parents[0]).blob_id(path) != blob:
                return commit
            commit = parents[0]
        return None

    def walk_leaves(self, base: CommitId | None, commit: CommitId) -> Iterator[Leaf]:
        """Every non-directory entry of ``commit`` not identical in ``base`` at its path.

        Subtrees whose id equals ``base``'s at the same path are skipped (the store's own
        tree is trusted), so a pull walks only what it brings. Names come raw: the caller
        decides which are acceptable. A tree nested deeper than any store path is refused.
        """
        new_tree = self.snapshot(commit).tree_id
        old_tree = self.snapshot(base).tree_id if base is not None else None
        stack: list[tuple[tuple[bytes, ...], bytes, bytes | None]] = []
        if new_tree is not None:
            stack.append(((), new_tree, old_tree))
        while stack:
            prefix, sha, old = stack.pop()
            if sha == old:
                continue
            if len(prefix) > MAX_DEPTH:
                shown = b"/".join(prefix).decode("utf-8", "backslashreplace")
                raise InvalidInputError(f"Refused: {shown!r} is nested too deeply for a store.")
            tree = _load(self._repo, sha)
            if not isinstance(tree, Tree):
                raise CorruptStoreError("A tree of the incoming commit is damaged.")
            before: dict[bytes, tuple[int, bytes]] = {}
            if old is not None:
                old_obj = _load(self._repo, old)
                if isinstance(old_obj, Tree):
                    before = {i.path: (i.mode, i.sha) for i in old_obj.iteritems()}
            for item in tree.iteritems():
                parts = (*prefix, item.path)
                was = before.get(item.path)
                if stat.S_ISDIR(item.mode):
                    stack.append((parts, item.sha, was[1] if was and was[0] == DIR_MODE else None))
                elif was != (item.mode, item.sha):
                    yield Leaf(parts, item.mode, item.sha.decode())

    def blob_size(self, sha: str) -> int | None:
        """A stored object's size read from its header, without inflating the object.

        Lets a check refuse a huge blob (a remote's zlib bomb) before loading it. None
        when the object is not stored in this repository's own directory (an
        alternate's, i.e. the store's own trusted objects) or its header is unreadable.
        """
        from dulwich.object_format import DEFAULT_OBJECT_FORMAT
        from dulwich.pack import load_pack_index

        objects = self.control_dir / "objects"
        try:
            with open(objects / sha[:2] / sha[2:], "rb") as handle:
                head = zlib.decompressobj().decompress(handle.read(256), 64)
            return int(head.split(b"\0", 1)[0].split(b" ", 1)[1])
        except FileNotFoundError:
            pass
        except (zlib.error, ValueError, IndexError):
            return None
        if self._pack_indexes is None:  # loaded once per store object, closed with it
            self._pack_indexes = [
                (idx.with_suffix(".pack"), load_pack_index(str(idx), DEFAULT_OBJECT_FORMAT))
                for idx in sorted((objects / "pack").glob("pack-*.idx"))
            ]
        for pack, index in self._pack_indexes:
            try:
                offset = index.object_offset(ObjectID(sha.encode()))
            except KeyError:
                continue
            with open(pack, "rb") as handle:
                handle.seek(offset)
                return _packed_size(handle.read(128))
        return None

    # -- settings of this device (never committed, never pulled) ----------------------------

    def device_limits(self) -> dict[str, int]:
        """Limits raised on this device with ``xbrain config``, from ``.git/config``."""
        config = self._repo.get_config()
        out = {}
        for key in ("maxEntries", "maxBytes"):
            with contextlib.suppress(KeyError, ValueError):
                out[key] = int(config.get((b"xbrain",), key.encode()))
        return out

    def set_device_limit(self, key: str, value: int) -> None:
        """Remember a limit the user raised here (what pulls are held to)."""
        with private_umask():
            config = self._repo.get_config()
            config.set((b"xbrain",), key.encode(), str(value).encode())
            config.write_to_path()

    # -- remotes ---------------------------------------------------------------------------

    def remotes(self) -> dict[str, str]:
        """Configured remotes: name → URL."""
        config = self._repo.get_config()
        out = {}
        for section in config.sections():
            if len(section) == 2 and section[0] == b"remote":
                with contextlib.suppress(KeyError):
                    out[section[1].decode()] = config.get(section, b"url").decode()
        return out

    def set_remote(self, name: str, url: str | None) -> None:
        """Add (or with None remove) a remote in the repository config."""
        from dulwich import porcelain

        with private_umask():
            if url is None:
                porcelain.remote_remove(self._repo, name)
            else:
                porcelain.remote_add(self._repo, name, url)

    def fetch(self, url: str, label: str | None = None) -> CommitId | None:
        """Fetch the remote ``main`` at ``url`` into this repository; its commit, or None.

        Only ``refs/heads/main`` is wanted, whatever the remote's HEAD names, so a bare
        repository made by ``git init --bare`` (HEAD: master) restores too. The objects
        arrive unreferenced (callers fetch into a quarantine or a clone being built, and
        check them first). ``label`` names the remote in messages (default: the URL,
        redacted).
        """
        from dulwich.client import get_transport_and_path

        seen: list[ObjectID] = []

        def wants(refs: Mapping[Ref, ObjectID], depth: int | None = None) -> list[ObjectID]:
            sha = refs.get(MAIN)
            if sha is None:
                return []
            seen.append(sha)
            return [] if sha in self._repo.object_store else [sha]

        try:
            with private_umask():
                client, path = get_transport_and_path(url, config=self._repo.get_config_stack())
                client.fetch(
                    path.encode() if isinstance(path, str) else path,
                    self._repo,
                    determine_wants=wants,
                    progress=lambda _data: None,
                )
        except XbrainError:
            raise
        except OSError as exc:
            if exc.errno == errno.ENOSPC:
                raise _disk_full() from None
            raise _remote_failure("fetch from", label or url, exc) from None
        except Exception as exc:  # dulwich raises many kinds for unreachable remotes
            raise _remote_failure("fetch from", label or url, exc) from None
        return CommitId(seen[0].decode()) if seen else None

    @contextlib.contextmanager
    def quarantine(self) -> Iterator[GitStore]:
        """A scratch repository for fetched objects, borrowing this store's (alternates).

        What a remote sends lands there, never in the store, until the caller has
        checked it and calls :meth:`accept_objects` (git's own receive quarantine).
        The scratch directory is removed afterwards; one a killed process left behind
        is removed by the next call.
        """
        scratch = self.control_dir / "xbrain" / "incoming"
        sweep_dead(scratch)
        with private_umask():
            scratch.mkdir(parents=True, exist_ok=True)
            work = Path(tempfile.mkdtemp(prefix=f"{os.getpid()}-", dir=scratch))
            try:
                Repo.init_bare(str(work), default_branch=b"main").close()
                info = work / "objects" / "info"
                info.mkdir(parents=True, exist_ok=True)
                own = os.path.abspath(self.control_dir / "objects")
                (info / "alternates").write_text(own + "\n")
                incoming = GitStore(work)
                head = self.head()
                if head is not None:  # so the remote sends only what the store lacks
                    incoming._repo.refs[MAIN] = ObjectID(head.encode())
            except BaseException:
                shutil.rmtree(work, ignore_errors=True)
                raise
        try:
            yield incoming
        finally:
            incoming.close()
            shutil.rmtree(work, ignore_errors=True)

    def accept_objects(self, incoming: GitStore) -> None:
        """Move the objects of a checked quarantine into this store (packs, then loose)."""
        source = incoming.control_dir / "objects"
        target = self.control_dir / "objects"
        with private_umask():
            pack_dir = source / "pack"
            names = sorted(os.listdir(pack_dir)) if pack_dir.is_dir() else []
            (target / "pack").mkdir(exist_ok=True)
            # the index last: a pack without its index is a leftover, never half-visible
            for name in sorted(names, key=lambda n: (n.endswith(".idx"), n)):
                if name.startswith("pack-"):
                    _private_file(pack_dir / name)  # dulwich makes packs 0444
                    os.replace(pack_dir / name, target / "pack" / name)
            for fan in sorted(source.iterdir()):
                if len(fan.name) == 2 and fan.is_dir():
                    (target / fan.name).mkdir(exist_ok=True)
                    for obj in fan.iterdir():
                        if not (target / fan.name / obj.name).exists():
                            _private_file(obj)
                            os.replace(obj, target / fan.name / obj.name)

    def note_remote_head(self, name: str, commit: CommitId) -> None:
        """Record ``refs/remotes/<name>/main`` (what the remote was last seen holding)."""
        with private_umask():
            self._repo.refs[Ref(b"refs/remotes/" + name.encode() + b"/main")] = ObjectID(
                commit.encode()
            )

    def push(self, location: str) -> None:
        """Push main as a compare-and-swap: only if the remote's main is our ancestor.

        The check runs inside the push, on the refs the remote reports at that moment,
        so a device that pushed meanwhile is never overwritten. A refused ref is an
        error, never silent.
        """
        from dulwich.client import get_transport_and_path

        url = self.remotes().get(location, location)
        head = self.head()
        if head is None:
            raise ConflictError("Nothing to push: the store has no commits.")
        diverged: list[bool] = []

        def update_refs(refs: dict[Ref, ObjectID]) -> dict[Ref, ObjectID]:
            unchanged = {name: sha for name, sha in refs.items() if name != Ref(b"HEAD")}
            current = refs.get(MAIN)
            if current is not None and current != head.encode():
                known = ObjectID(current) in self._repo.object_store
                if not known or not self.is_ancestor(CommitId(current.decode()), head):
                    diverged.append(True)
                    return unchanged  # change nothing
            return {**unchanged, MAIN: ObjectID(head.encode())}

        started = time.time()
        try:
            with private_umask():
                client, path = get_transport_and_path(url, config=self._repo.get_config_stack())
                result = client.send_pack(
                    path.encode() if isinstance(path, str) else path,
                    update_refs,
                    generate_pack_data=cast(Any, self._repo.generate_pack_data),
                )
        except FileLocked:
            from .urls import redact_url

            raise ProviderError(
                "The remote refused refs/heads/main: it is locked (another push?); "
                f"retry {redact_url(location)}."
            ) from None
        except XbrainError:
            raise
        except OSError as exc:
            if exc.errno == errno.ENOSPC:
                raise _disk_full() from None
            raise _remote_failure("push to", location, exc) from None
        except Exception as exc:  # dulwich raises many kinds for unreachable remotes
            raise _remote_failure("push to", location, exc) from None
        finally:
            local = _local_repository(url)
            if local is not None:
                _privatize_written(local, started)
        if diverged:
            raise ConflictError(
                "The remote has commits this store lacks; run xbrain remote pull first."
            )
        for ref, error in (getattr(result, "ref_status", None) or {}).items():
            if error:
                raise ProviderError(f"The remote refused {ref.decode()}: {error}")
        if local is not None:
            _point_unborn_head_at_main(local)
        with private_umask():  # remember what the remote now has
            self._repo.refs[Ref(b"refs/remotes/" + location.encode() + b"/main")] = (
                ObjectID(head.encode()) if location in self.remotes() else self._repo.refs[MAIN]
            )

    def is_ancestor(self, older: CommitId, newer: CommitId) -> bool:
        """True when ``older`` is reachable from ``newer`` (or equal).

        A plain walk over parents: dulwich's date-ordered ``can_fast_forward`` answers
        wrongly when commits share a timestamp, which xbrain's second-resolution commits
        often do (found by the two-device test).
        """
        seen: set[str] = set()
        todo = [str(newer)]
        while todo:
            commit = todo.pop()
            if commit == older:
                return True
            if commit in seen:
                continue
            seen.add(commit)
            todo.extend(self.commit_info(CommitId(commit)).parents)
        return False

    # -- writing ---------------------------------------------------------------------------

    def _build_tree(
        self, base: bytes | None, changes: dict[bytes, bytes | None], out: list[ShaFile]
    ) -> bytes | None:
        tree = Tree()
        if base is not None:
            old = _load(self._repo, base)
            if not isinstance(old, Tree):
                raise CorruptStoreError("Store tree is damaged; run xbrain doctor.")
            for item in old.iteritems():
                tree.add(item.path, item.mode, item.sha)
        nested: dict[bytes, dict[bytes, bytes | None]] = {}
        for path, data in changes.items():
            head, sep, rest = path.partition(b"/")
            if sep:
                nested.setdefault(head, {})[rest] = data
            elif data is None:
                if head in tree:
                    del tree[head]
            else:
                blob = Blob.from_string(data)
                out.append(blob)
                tree.add(head, FILE_MODE, blob.id)
        for name, sub in nested.items():
            sub_base = None
            if name in tree:
                mode, sha = tree[name]
                sub_base = sha if mode == DIR_MODE else None
            sub_id = self._build_tree(sub_base, sub, out)
            if sub_id is None:
                if name in tree:
                    del tree[name]
            else:
                tree.add(name, DIR_MODE, ObjectID(sub_id))
        if len(tree) == 0 and base is not None:
            return None
        out.append(tree)
        return bytes(tree.id)

    def commit(
        self,
        parent: CommitId | None,
        changes: Mapping[str, bytes | None],
        message: str,
        identity: str,
        when: int,
        merged: CommitId | None = None,
    ) -> CommitId:
        """Commit ``changes`` (path → bytes, or None to delete) on top of ``parent``.

        ``merged`` adds a second parent (a merge commit).

        Moves ``main`` only if it still equals ``parent``; otherwise ConflictError and
        nothing visible changed.
        """
        commit = self.write_commit(parent, changes, message, identity, when, merged)
        self.move_main(parent, commit, identity, message, paths=list(changes))
        return commit

    def write_commit(
        self,
        parent: CommitId | None,
        changes: Mapping[str, bytes | None],
        message: str,
        identity: str,
        when: int,
        merged: CommitId | None = None,
    ) -> CommitId:
        """Store a commit of ``changes`` on top of ``parent`` without moving any ref."""
        with private_umask():
            objects: list[ShaFile] = []
            base = None
            if parent is not None:
                parent_obj = _load(self._repo, parent.encode())
                assert isinstance(parent_obj, Commit)
                base = parent_obj.tree
            encoded = {path.encode(): data for path, data in changes.items()}
            tree_id = self._build_tree(base, encoded, objects)
            if tree_id is None:  # every file removed: an empty root tree
                empty = Tree()
                objects.append(empty)
                tree_id = bytes(empty.id)
            commit = Commit()
            commit.tree = ObjectID(tree_id)
            commit.parents = [ObjectID(parent.encode())] if parent else []
            if merged is not None:
                commit.parents.append(ObjectID(merged.encode()))
            commit.author = commit.committer = identity.encode()
            commit.author_time = commit.commit_time = when
            commit.author_timezone = commit.commit_timezone = 0
            commit.encoding = b"UTF-8"
            commit.message = message.encode()
            objects.append(commit)
            self._add_objects(objects)
            return CommitId(commit.id.decode())

    def _add_objects(self, objects: list[ShaFile]) -> None:
        """Write objects (one pack when many), clearing what a killed writer left.

        Callers hold the store lock, so an object's ``.lock`` file can only be the
        leftover of a writer that died: it is removed and the write retried once.
        """
        store = self._repo.object_store
        try:
            if len(objects) > _PACK_THRESHOLD:
                store.add_objects([(obj, None) for obj in objects])
                return
            for obj in objects:
                try:
                    store.add_object(obj)
                except FileLocked as exc:
                    Path(os.fsdecode(exc.lockfilename)).unlink(missing_ok=True)
                    store.add_object(obj)
        except OSError as exc:
            if exc.errno in (errno.ENOSPC, errno.EDQUOT):
                raise _disk_full() from None
            raise

    def move_main(
        self,
        old: CommitId | None,
        new: CommitId,
        identity: str,
        message: str,
        paths: list[str] | None = None,
    ) -> None:
        """Compare-and-swap ``main`` from ``old`` to ``new`` (a stored commit).

        ``paths`` are the working-tree files the move makes stale (default: all of
        ``new``); they are recorded first, so a crash right after is finished later.
        """
        target = _load(self._repo, new.encode())
        assert isinstance(target, Commit)
        reflog = b"xbrain: " + message.splitlines()[0].encode()[:200] if message else b"xbrain"
        with private_umask():
            self._write_marker(
                new, paths if paths is not None else [p for p, _ in self.snapshot(new).files()]
            )
            try:
                moved = self._move_main(old, target, identity, reflog)
            except FileLocked:
                raise BusyError(
                    "A git command is updating the store (refs/heads/main.lock); retry, or run "
                    "xbrain doctor --repair if no git command is running."
                ) from None
            except OSError as exc:
                if exc.errno in (errno.ENOSPC, errno.EDQUOT):
                    raise _disk_full() from None
                raise
        if not moved:
            raise ConflictError(
                "The store changed during this write (outside xbrain?); retry the command."
            )

    def _move_main(
        self, parent: CommitId | None, commit: Commit, identity: str, reflog: bytes
    ) -> bool:
        """CAS ``main`` from ``parent`` to ``commit`` (create it for the first commit)."""
        if parent is None:
            return bool(
                self._repo.refs.add_if_new(
                    MAIN, commit.id, committer=identity.encode(), message=reflog
                )
            )
        return bool(
            self._repo.refs.set_if_equals(
                MAIN,
                ObjectID(parent.encode()),
                commit.id,
                committer=identity.encode(),
                message=reflog,
            )
        )

    # -- working tree ----------------------------------------------------------------------

    def _marker_path(self) -> Path:
        return self.control_dir / _MARKER

    def _write_marker(self, commit: str, paths: list[str]) -> None:
        marker = self._marker_path()
        marker.parent.mkdir(exist_ok=True)
        known: set[str] = set(paths)
        with contextlib.suppress(OSError, ValueError):
            known.update(json.loads(marker.read_text())["paths"])
        temp = marker.with_suffix(".tmp")
        temp.write_text(json.dumps({"commit": commit, "paths": sorted(known)}))
        os.replace(temp, marker)

    def crashed_write_locks(self) -> list[Path]:
        """Git lock files left by an xbrain write that was killed mid-commit.

        Only meaningful while holding the store lock: the pending marker proves an xbrain
        write did not finish, and a ref/index lock no older than that marker is its own.
        """
        try:
            since = self._marker_path().stat().st_mtime
        except FileNotFoundError:
            return []
        candidates = [
            self.control_dir / "refs" / "heads" / "main.lock",
            self.control_dir / "index.lock",
        ]
        return [p for p in candidates if p.exists() and p.stat().st_mtime >= since]

    def pack_leftovers(self) -> list[Path]:
        """Files a killed pack write leaves in ``objects/pack`` (temp packs, index locks,
        packs without an index). Nothing references their objects: the ref moves only
        after the pack is complete."""
        pack_dir = self.control_dir / "objects" / "pack"
        if not pack_dir.is_dir():
            return []
        found = []
        for path in pack_dir.iterdir():
            name = path.name
            if (
                name.endswith(".lock")
                or (name.startswith("tmp") and name.endswith(".pack"))
                or (name.endswith(".pack") and not path.with_suffix(".idx").exists())
            ):
                found.append(path)
        return sorted(found)

    def pending_worktree_paths(self) -> list[str]:
        """Paths a crashed write may have left stale in the working tree."""
        try:
            paths: list[str] = json.loads(self._marker_path().read_text())["paths"]
        except FileNotFoundError:
            return []
        except (OSError, ValueError, KeyError):
            return ["*"]
        return paths

    def refresh_worktree(
        self, commit: CommitId | None, paths: list[str], *, fresh: bool = False
    ) -> None:
        """Make the working tree and git index match ``commit`` at ``paths``.

        Never follows a symbolic link: a link where a directory or file belongs is an
        error (``doctor --repair`` removes it), and files are replaced, not written
        through. Paths that are not plain store paths are never written. ``fresh``: an
        empty working tree no one else can see yet (a clone being built), so files are
        created in place, without a temp file and a rename each.
        """
        try:
            self._refresh(commit, paths, fresh)
        except OSError as exc:
            if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
                raise
            shown = commit[:12] if commit else "empty"
            raise XbrainError(
                f"The disk filled up while updating the working tree; the change is committed "
                f"(main is {shown}). Free some space, then run xbrain doctor --repair."
            ) from None

    def _refresh(self, commit: CommitId | None, paths: list[str], fresh: bool = False) -> None:
        snap = self.snapshot(commit)
        root = self.path
        entries: dict[bytes, bytes | None] = {}
        with private_umask():
            for path in paths:
                target = self._worktree_target(path, create=True)
                blob = snap.blob_id(path)
                if blob is None:
                    with contextlib.suppress(FileNotFoundError):
                        target.unlink()
                    _prune_empty_dirs(target.parent, root)
                    entries[path.encode()] = None
                    continue
                data = snap.blob(blob)
                if fresh:
                    _write_new(target, data)
                elif read_worktree_file(target, len(data)) != data:
                    # a fixed name: a write killed here leaves a file the retry replaces
                    temp = target.with_name(f".{target.name}{WORKTREE_TEMP}")
                    _write_new(temp, data)
                    os.replace(temp, target)
                entries[path.encode()] = gitindex.entry_bytes(path.encode(), os.lstat(target), blob)
            try:
                stamp = self.control_dir / "xbrain" / "index-stamp"
                if not gitindex.update(Path(self._repo.index_path()), entries, stamp):
                    self._update_index_slowly(entries)
            except (gitindex.IndexLocked, FileLocked):
                return  # a git command holds the index: the marker stays, the next write retries
            with contextlib.suppress(FileNotFoundError):
                self._marker_path().unlink()

    def _worktree_target(self, path: str, *, create: bool) -> Path:
        """``root/path`` after checking that no component is a link or a foreign name."""
        problem = path_problem(path)
        if problem is not None:
            raise CorruptStoreError(
                f"Refusing to write {path!r} in the working tree: it is {problem}."
            )
        current = self.path
        for part in path.split("/")[:-1]:
            current = current / part
            try:
                info = os.lstat(current)
            except FileNotFoundError:
                if not create:
                    continue
                os.mkdir(current, 0o700)
                continue
            if not stat.S_ISDIR(info.st_mode):
                rel = current.relative_to(self.path)
                raise CorruptStoreError(
                    f"{rel} in the working tree is a symbolic link or a file, not a directory; "
                    "run xbrain doctor --repair."
                )
        return self.path / path

    def check_worktree_paths(self, paths: list[str]) -> None:
        """Fail before a commit when a path could not be written safely afterwards."""
        for path in paths:
            self._worktree_target(path, create=False)

    def worktree_links(self) -> list[str]:
        """Symbolic links in the working tree (outside ``.git``): never xbrain's own."""
        found = []
        for directory, dirs, names in os.walk(self.path):
            if directory == str(self.path):
                dirs[:] = [d for d in dirs if d != ".git"]
            for name in [*dirs, *names]:
                full = os.path.join(directory, name)
                if os.path.islink(full):
                    found.append(os.path.relpath(full, self.path))
        return sorted(found)

    def _update_index_slowly(self, entries: dict[bytes, bytes | None]) -> None:
        """dulwich's full rewrite, for index formats the fast editor leaves alone."""
        from dulwich.index import Index, index_entry_from_stat

        index = Index(self._repo.index_path())
        for path, entry in entries.items():
            if entry is None:
                if path in index:
                    del index[path]
            else:
                target = self.path / path.decode()
                blob = entry[40:60].hex().encode()
                index[path] = index_entry_from_stat(os.lstat(target), blob, FILE_MODE)
        index.write()

    def worktree_files(self) -> Iterator[str]:
        """Every file in the working tree (relative paths), outside ``.git``."""
        for directory, dirs, names in os.walk(self.path):
            dirs[:] = [d for d in dirs if not (directory == str(self.path) and d == ".git")]
            rel = os.path.relpath(directory, self.path)
            for name in names:
                yield name if rel == "." else f"{rel}/{name}"

    def index_sorted(self, repair: bool) -> bool:
        """Whether the git index is in path order; with ``repair``, put it in order."""
        path, stamp = Path(self._repo.index_path()), self.control_dir / "xbrain" / "index-stamp"
        try:
            if gitindex.in_order(path):
                return True
            if repair:
                with private_umask():
                    gitindex.sort_entries(path, stamp)
        except (gitindex.Unsupported, gitindex.IndexLocked, ValueError):
            return True  # an index git wrote in a form this editor leaves to git
        return False

    def index_paths(self) -> dict[str, str]:
        """Path → blob id of every git-index entry."""
        try:
            return gitindex.read_entries(Path(self._repo.index_path()))
        except (gitindex.Unsupported, ValueError):
            from dulwich.index import Index

            index = Index(self._repo.index_path())
            out: dict[str, str] = {}
            for path, entry in index.items():
                sha = getattr(entry, "sha", None)
                if sha is not None:
                    out[path.decode()] = sha.decode()
            return out

    @staticmethod
    def hash_blob(data: bytes) -> str:
        """The git blob id of some bytes."""
        return str(Blob.from_string(data).id.decode())

    def stale_git_locks(self) -> list[Path]:
        """Lock files git writers leave behind when killed (refs, index, config)."""
        found = [
            p
            for p in self.control_dir.rglob("*.lock")
            if p.name != "xbrain.lock" and p.parent.name != "pack"
        ]
        return sorted(found)

    def fsck(self) -> list[str]:
        """Object integrity problems, one line each."""
        from dulwich import porcelain

        problems = []
        for sha, error in porcelain.fsck(self._repo):
            problems.append(f"{sha.decode()}: {error}")
        return problems


def read_worktree_file(path: Path, limit: int) -> bytes | None:
    """A regular file's bytes when it holds at most ``limit`` of them (links not followed).

    None for a link, a FIFO, a device, a directory, a missing or a larger file.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            return None
        return handle.read(limit + 1)


def _write_new(path: Path, data: bytes) -> None:
    """Write a fresh private file; a link planted at ``path`` is removed, not followed."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(path)
        raise


def _prune_empty_dirs(directory: Path, root: Path) -> None:
    while directory != root and directory.is_dir():
        try:
            directory.rmdir()
        except OSError:
            return
        directory = directory.parent


def file_mode_problems(root: Path) -> list[str]:
    """Files or directories under ``root`` that group or others can access."""
    problems = []
    for directory, dirs, names in os.walk(root):
        for name in [*dirs, *names]:
            path = os.path.join(directory, name)
            mode = os.lstat(path).st_mode
            if not stat.S_ISLNK(mode) and mode & 0o077:
                problems.append(os.path.relpath(path, root))
    return problems


def fix_file_modes(root: Path) -> None:
    """Remove group/other permissions under ``root``."""
    for rel in file_mode_problems(root):
        path = root / rel
        os.chmod(path, os.lstat(path).st_mode & 0o700)


def _packed_size(entry: bytes) -> int | None:
    """The inflated size of a pack entry from its header (deltas: the result's size)."""
    try:
        byte = entry[0]
        kind, size, shift, at = (byte >> 4) & 7, byte & 15, 4, 1
        while byte & 0x80:
            byte = entry[at]
            size |= (byte & 0x7F) << shift
            shift, at = shift + 7, at + 1
        if kind in (1, 2, 3, 4):  # commit, tree, blob, tag
            return size
        if kind == 6:  # offset delta: skip the base offset
            while entry[at] & 0x80:
                at += 1
            at += 1
        elif kind == 7:  # reference delta: skip the base id
            at += 20
        else:
            return None
        delta = zlib.decompressobj().decompress(entry[at:], 32)
        values, value, shift = [], 0, 0
        for byte in delta:  # two varints: the base's size, then the result's
            value |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                values.append(value)
                value, shift = 0, 0
                if len(values) == 2:
                    return values[1]
    except (IndexError, zlib.error):
        return None
    return None


def _private_file(path: Path) -> None:
    """Drop group and other permission bits (0444 → 0400)."""
    os.chmod(path, os.lstat(path).st_mode & 0o700)


def sweep_dead(scratch: Path) -> None:
    """Remove ``<pid>-…`` scratch directories whose process is gone (killed mid-way)."""
    if not scratch.is_dir():
        return
    for entry in scratch.iterdir():
        pid = entry.name.split("-", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(entry, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _local_repository(url: str) -> Path | None:
    """The directory of a remote on this machine (a path or file:// URL), else None."""
    if "://" in url and not url.startswith("file://"):
        return None
    path = Path(url.removeprefix("file://"))
    if not path.is_absolute() or not path.is_dir():
        return None
    return path / ".git" if (path / ".git").is_dir() else path


def _privatize_written(repo_dir: Path, since: float) -> None:
    """Take group/other bits off what a push just wrote into a local repository.

    dulwich chmods packs to 0444 whatever the umask, and a bare repository the user
    made with ``git init --bare`` is 0755: a backup must be as private as the store.
    Files older than the push are left as they were.
    """
    for directory, dirs, names in os.walk(repo_dir):
        for name in [*dirs, *names]:
            path = os.path.join(directory, name)
            with contextlib.suppress(OSError):
                info = os.lstat(path)
                if (
                    not stat.S_ISLNK(info.st_mode)
                    and info.st_mode & 0o077
                    and max(info.st_mtime, info.st_ctime) >= since - 1
                ):
                    os.chmod(path, info.st_mode & 0o700)


def _point_unborn_head_at_main(repo_dir: Path) -> None:
    """A fresh ``git init --bare`` names ``master``: point its unborn HEAD at ``main``."""
    with contextlib.suppress(Exception), Repo(str(repo_dir)) as remote:
        chain, sha = remote.refs.follow(Ref(b"HEAD"))
        if sha is None and chain and chain[-1] != MAIN:
            with private_umask():
                remote.refs.set_symbolic_ref(Ref(b"HEAD"), MAIN)
