"""A git repository read through dulwich: refs, commits, history walks, settings.

The base the writer, working-tree and transport parts of ``GitStore`` build on.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import zlib
from pathlib import Path
from typing import Any, TypeVar

from dulwich.errors import (
    NotGitRepository,
)
from dulwich.objects import Commit, ObjectID, ShaFile
from dulwich.repo import Repo

from ..errors import (
    CorruptStoreError,
    NotFoundError,
)
from .checkedout import CheckedOut, blob_sha
from .objects import (
    DAMAGE,
    DIR_MODE,
    MAIN,
    PLAIN_LINE_ENDINGS,
    PRIVATE_SETTINGS,
    CommitId,
    CommitInfo,
    Snapshot,
    config_change,
    load_object,
    private_umask,
    tree_cache,
)
from .packcheck import packed_size
from .pending import ObjectsMarker, PendingMarker
from .walk import Walking

__all__ = ["Repository", "keep_repositories", "release_repositories"]

R = TypeVar("R", bound="Repository")

_ANCESTRY = re.compile(r"(?:[~^]\d{0,6})+$")

# dulwich's warnings (a damaged pack's bitmap ignored) never reach stderr: an error is
# one line, and what dulwich works around is no error
logging.getLogger("dulwich").addHandler(logging.NullHandler())


# dulwich repositories kept open across requests once keep_repositories() was called
# (``xbrain serve``), by path: (identity of the ``.git`` directory, the repository)
_kept: dict[str, tuple[tuple[int, int], Repo]] | None = None


def keep_repositories() -> None:
    """Keep each repository this process opens open for the next open of the same store
    (``xbrain serve``): its object store keeps its packs' indexes loaded instead of
    opening each pack again per request. Nothing read through it goes stale: refs and
    settings are read from their files on each use, and dulwich rescans the pack
    directory whenever an object is not found, a pack has disappeared, or a snapshot
    lists the packs (closing the packs a merge removed)."""
    global _kept
    if _kept is None:
        _kept = {}


def release_repositories() -> None:
    """Close every kept repository (a server idle for a while: no pack a merge removed
    stays mapped; the next request opens its store again)."""
    for _, repo in (_kept or {}).values():
        repo.close()
    if _kept:
        _kept.clear()


def _open(path: Path) -> Repo:
    """A dulwich repository at ``path``: the kept one while its ``.git`` is the same
    directory (a store removed and made again at the path is opened afresh)."""
    if _kept is None:
        return Repo(str(path))
    try:
        info = os.stat(path / ".git")
    except OSError:
        return Repo(str(path))  # dulwich says what is wrong
    key, identity = os.path.realpath(path), (info.st_dev, info.st_ino)
    kept = _kept.get(key)
    if kept is not None and kept[0] == identity:
        return kept[1]
    if kept is not None:
        del _kept[key]
        kept[1].close()
    repo = Repo(str(path))
    _kept[key] = (identity, repo)
    return repo


class Repository(Walking):
    """A git repository with a working tree, driven only through dulwich."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self._repo = _open(path)
        except NotGitRepository:
            raise CorruptStoreError(f"Not an xbrain store: {path}") from None
        self._pack_indexes: list[tuple[Path, Any]] | None = None
        self.trees = tree_cache()  # parsed trees, shared by this repository's snapshots
        # Objects are fsynced before the ref moves (dulwich's knob; git reads core.fsync).
        store = self._repo.object_store
        if hasattr(store, "fsync_object_files"):
            store.fsync_object_files = True

    # -- lifecycle -------------------------------------------------------------------------

    @staticmethod
    def init_private(path: Path) -> None:
        """An empty repository with a working tree, branch ``main`` and private settings."""
        with private_umask():
            repo = Repo.init(str(path), default_branch=b"main")
            try:
                config = repo.get_config()
                # git's own writes (status, gc) stay private too
                for section, name, value in PRIVATE_SETTINGS:
                    config.set(section, name, value)
                config.set((b"core",), b"fsync", b"objects,reference")
                config.set((b"gc",), b"autoDetach", False)
                config.set(*PLAIN_LINE_ENDINGS)
                config.write_to_path()
            finally:
                repo.close()

    @staticmethod
    def init_bare(path: Path) -> None:
        """An empty, private bare repository (a backup target on a local disk)."""
        with private_umask():
            mkdir = not path.exists()  # else an empty folder made for it
            Repo.init_bare(str(path), mkdir=mkdir, default_branch=b"main").close()

    def close(self) -> None:
        """Release the repository's file handles."""
        for _, index in self._pack_indexes or ():
            index.close()
        self._pack_indexes = None
        if not any(repo is self._repo for _, repo in (_kept or {}).values()):
            # a kept one stays open for the next request. A damaged pack's error on its
            # way out still holds a view of the pack's map in its traceback: that map is
            # left to be unmapped once the error is gone, never raised in its place
            with contextlib.suppress(BufferError):
                self._repo.close()

    def __enter__(self: R) -> R:
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

    def snapshot(self, commit: CommitId | None = None, *, checked_out: bool = False) -> Snapshot:
        """A read view of ``commit`` (default: the current head). ``checked_out``: a
        write's view of the head, which reads a file from the working tree when its bytes
        there are the commit's (:mod:`.checkedout`). Reads alone always read the object
        store, so they report a missing or damaged object as they meet it."""
        if commit is not None:
            return Snapshot(self._repo, commit, self.trees)
        where = CheckedOut(str(self.path)) if checked_out and not self._repo.bare else None
        return Snapshot(self._repo, self.head(), self.trees, where)

    def commit_info(self, commit: CommitId) -> CommitInfo:
        """Metadata of one commit."""
        try:
            obj = load_object(self._repo, commit.encode())
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
            except (KeyError, ValueError, NotImplementedError, *DAMAGE):
                continue
        if obj is None:
            raise NotFoundError(f"Unknown revision: {rev}")
        if not isinstance(obj, Commit):
            raise NotFoundError(f"Not a commit: {rev}")
        return CommitId(obj.id.decode())

    def has_commit(self, commit: str) -> bool:
        """True when ``commit`` names a commit in this repository."""
        try:
            return isinstance(load_object(self._repo, commit.encode()), Commit)
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
            entry = snap.entry(prefix)
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

    def path_commits(self, path: str, limit: int, scan: int = 100_000) -> list[CommitInfo]:
        """Newest first, the commits on ``main``'s first-parent line that changed the file
        or directory at ``path`` (at most ``limit``, looking at most ``scan`` commits)."""
        found: list[CommitInfo] = []
        commit = self.head()
        entry = None if commit is None else self.snapshot(commit).entry(path)
        for _ in range(scan):
            if commit is None or len(found) >= limit:
                break
            info = self.commit_info(commit)
            parent = info.parents[0] if info.parents else None
            before = None if parent is None else self.snapshot(parent).entry(path)
            if before != entry:
                found.append(info)
            commit, entry = parent, before
        return found

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
                return packed_size(handle.read(128))
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
        with config_change():
            config = self._repo.get_config()
            config.set((b"xbrain",), key.encode(), str(value).encode())
            config.write_to_path()

    @property
    def pending(self) -> PendingMarker:
        """The marker of working-tree paths a write has yet to refresh."""
        return PendingMarker(self.control_dir)

    @property
    def objects_pending(self) -> ObjectsMarker:
        """The marker of the loose objects a write is adding."""
        return ObjectsMarker(self.control_dir)

    @staticmethod
    def hash_blob(data: bytes) -> str:
        """The git blob id of some bytes."""
        return blob_sha(data)

    def stale_git_locks(self) -> list[Path]:
        """Lock files git writers leave behind when killed (refs, index, config); not
        xbrain's own (``.git/xbrain/``: its derived data and session locks)."""
        own = self.control_dir / "xbrain"
        found = [
            p
            for p in self.control_dir.rglob("*.lock")
            if p.name != "xbrain.lock" and p.parent.name != "pack" and not p.is_relative_to(own)
        ]
        return sorted(found)

    def fsck(self) -> list[str]:
        """Object integrity problems, one line each."""
        from dulwich import porcelain

        problems = []
        for sha, error in porcelain.fsck(self._repo):
            problems.append(f"{sha.decode()}: {error}")
        return problems
