"""Git objects as plain data: one commit's tree read through dulwich, and helpers.

dulwich types and exceptions never leave the ``xbrain.git`` package; paths are ``str``
outside and UTF-8 ``bytes`` inside.
"""

from __future__ import annotations

import contextlib
import os
import re
import zlib
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import NamedTuple, NewType, TypeVar

from dulwich.errors import (
    ApplyDeltaError,
    ChecksumMismatch,
    FileFormatException,
    ObjectFormatException,
)
from dulwich.file import FileLocked
from dulwich.object_store import iter_tree_contents
from dulwich.objects import Blob, Commit, ObjectID, ShaFile, Tree
from dulwich.refs import Ref
from dulwich.repo import Repo

from ..errors import (
    BusyError,
    CorruptStoreError,
    ProviderError,
    XbrainError,
)
from .checkedout import CheckedOut
from .near import Near

__all__ = [
    "CommitId",
    "CommitInfo",
    "Leaf",
    "Snapshot",
    "Trees",
    "keep_trees",
    "load_object",
    "private_umask",
    "tree_cache",
]

CommitId = NewType("CommitId", str)
T = TypeVar("T")

MAIN = Ref(b"refs/heads/main")
# git's checkouts in a store write files as stored, whatever a global autocrlf says
PLAIN_LINE_ENDINGS = ((b"core",), b"autocrlf", b"false")
# a store's own repository stays private when git writes in it (status, gc): set at init,
# and by doctor --repair where missing (a plain git clone)
PRIVATE_SETTINGS = (((b"core",), b"sharedRepository", b"0600"), ((b"gc",), b"auto", b"0"))
FILE_MODE = 0o100644
DIR_MODE = 0o040000
MAX_DEPTH = 8  # deeper than any path of the layout; bounds the walk of a hostile tree
PENDING_MARKER = "xbrain/worktree-pending.json"
OBJECTS_MARKER = "xbrain/objects-pending"  # the loose objects a write is adding


# an object's name: hex of a SHA-1 or a SHA-256 (dulwich asserts on anything else)
OBJECT_NAME = re.compile(rb"[0-9a-f]{40}|[0-9a-f]{64}")

# what dulwich raises reading a damaged pack or object (a pack's header or an entry cut
# short: AssertionError)
DAMAGE = (
    AssertionError,
    ApplyDeltaError,
    ChecksumMismatch,
    FileFormatException,
    ObjectFormatException,
    zlib.error,
    ValueError,
    EOFError,
)


def load_object(repo: Repo, sha: bytes) -> ShaFile:
    """One object by id; damage or absence becomes CorruptStoreError (never dulwich's),
    and so does a name no object can have (a damaged index's note of its commit)."""
    if not OBJECT_NAME.fullmatch(sha):
        shown = sha[:80].decode("ascii", "replace")
        raise CorruptStoreError(f"{shown!r} is not a git object name; run xbrain doctor.")
    try:
        try:
            return repo.object_store[ObjectID(sha)]
        except KeyError:  # packed and pruned while this looked: the packs, read again
            return repo.object_store[ObjectID(sha)]
    except KeyError:
        raise CorruptStoreError(
            f"Git object {sha.decode()} is missing; run xbrain doctor."
        ) from None
    except DAMAGE as exc:
        raise CorruptStoreError(
            f"Git object {sha.decode()} is damaged; run xbrain doctor."
        ) from exc


def disk_full() -> XbrainError:
    return XbrainError("The disk is full (no space left on device); nothing was committed.")


@contextlib.contextmanager
def config_change() -> Iterator[None]:
    """Around a write of ``.git/config`` (private, like every git write): its lock held
    by a git command, or left by one that was killed, is BusyError, not an internal
    error."""
    with private_umask():
        try:
            yield
        except FileLocked:
            raise BusyError(
                "A git command is changing the store's settings (.git/config.lock); retry, "
                "or if none is running, xbrain doctor --repair removes the lock once it is "
                "a minute old."
            ) from None


def remote_failure(action: str, location: str, exc: BaseException) -> ProviderError:
    """One line for a failed network operation; never echoes credentials."""
    from ..urls import redact_url

    text = " ".join(str(exc).split())
    detail = text if 0 < len(text) <= 160 else type(exc).__name__
    return ProviderError(redact_url(f"Could not {action} {location}: {detail}".rstrip(".") + "."))


def guarded_objects(records: Iterable[T]) -> Iterator[T]:
    """``records`` (the objects a push sends), an object missing or damaged on the way
    being the store's corruption."""
    try:
        yield from records
    except (KeyError, *DAMAGE) as exc:
        raise objects_damaged() from exc


def objects_damaged() -> CorruptStoreError:
    """The error of a push that met an object missing or damaged in the store."""
    return CorruptStoreError(
        "An object of the store is missing or damaged, so it cannot be sent; nothing was "
        "pushed. Run xbrain doctor."
    )


@contextlib.contextmanager
def private_umask() -> Iterator[None]:
    """Create every file 0600 / directory 0700 (including git's own) inside the block."""
    old = os.umask(0o077)
    try:
        yield
    finally:
        os.umask(old)


class CommitInfo(NamedTuple):
    """One commit as plain data."""

    id: CommitId
    parents: tuple[CommitId, ...]
    author: str
    time: int
    message: str


class Leaf(NamedTuple):
    """One non-directory entry of a tree: raw name components, git mode, object id."""

    parts: tuple[bytes, ...]
    mode: int
    sha: str


# what a snapshot keeps of the blobs read() returned: past either bound it starts over,
# so a walk over every file (doctor, a merge) holds at most this much, whatever the sizes
_FILES_KEPT = 2048
_BYTES_KEPT = 32 << 20


# entries (of every tree) a tree cache holds at most: a batch into a 100,000-record store
# reads the 256 ``resources/<aa>/`` trees (100,000 entries) and writes their new versions;
# a server keeps less across its requests (~250 bytes an entry: 25 MB)
_TREE_ENTRIES = 300_000
_KEPT_ENTRIES = 100_000


class Trees:
    """Parsed trees by id, least recently used dropped first past ``limit`` entries.
    A tree's id names its content, so a kept tree is never stale: the snapshots
    and the commit of one write share one cache (a batch reads each tree it changes
    once), and ``xbrain serve`` keeps one across its requests (:func:`keep_trees`)."""

    def __init__(self, limit: int = _TREE_ENTRIES) -> None:
        self._trees: dict[bytes, Tree] = {}
        self._entries = 0
        self._limit = limit

    def get(self, repo: Repo, sha: bytes, load: Callable[[bytes], ShaFile] | None = None) -> Tree:
        """The tree ``sha`` (CorruptStoreError when it is missing or not a tree), read
        through ``load`` when given (a snapshot's reads), else :func:`load_object`."""
        tree = self._trees.pop(sha, None)
        if tree is None:
            obj = load(sha) if load is not None else load_object(repo, sha)
            if not isinstance(obj, Tree):
                raise CorruptStoreError("Store tree is damaged; run xbrain doctor.")
            tree = obj
            self._entries += len(tree)
        self._trees[sha] = tree  # (re)inserted last: the most recently used
        self._shrink()
        return tree

    def add(self, tree: Tree) -> None:
        """Keep a tree just written (never changed afterwards)."""
        sha = bytes(tree.id)
        if sha not in self._trees:
            self._trees[sha] = tree
            self._entries += len(tree)
            self._shrink()

    def _shrink(self) -> None:
        while self._entries > self._limit and len(self._trees) > 1:
            oldest = next(iter(self._trees))
            self._entries -= len(self._trees.pop(oldest))


_kept: Trees | None = None  # the process's own, once keep_trees() was called


def keep_trees() -> None:
    """Share one tree cache between every repository this process opens from now on
    (``xbrain serve``: a write reads again only the trees the last one changed)."""
    global _kept
    if _kept is None:
        _kept = Trees(_KEPT_ENTRIES)


def tree_cache() -> Trees:
    """The tree cache a newly opened repository uses: the process's kept one, or its own."""
    return _kept if _kept is not None else Trees()


class Snapshot:
    """Read-only view of one commit's tree, with a small tree cache. ``checked_out``: the
    working tree, where :meth:`read` finds a file's bytes first when they are the
    commit's (:class:`.checkedout.CheckedOut`)."""

    def __init__(
        self,
        repo: Repo,
        commit: CommitId | None,
        trees: Trees | None = None,
        checked_out: CheckedOut | None = None,
    ) -> None:
        self._repo = repo
        self._checked_out = checked_out
        self.commit = commit
        self._trees = trees if trees is not None else Trees()
        self._files: dict[bytes, bytes] = {}  # read()'s blobs by id: a transaction reads
        # each catalog and URL shard it changes three times (load, compare, compare again)
        self._kept = 0  # their bytes
        self._near: Near | None = None  # made on the first object read past the commit
        self.tree_id: bytes | None = None
        if commit is not None:
            obj = load_object(repo, commit.encode())
            if not isinstance(obj, Commit):
                raise CorruptStoreError(f"{commit} is not a commit.")
            self.tree_id = obj.tree

    def _tree(self, sha: bytes) -> Tree:
        return self._trees.get(self._repo, sha, self._object)

    def _object(self, sha: bytes) -> ShaFile:
        if self._near is None:
            self._near = Near(self._repo)
        found = self._near.load(sha)
        return found if found is not None else load_object(self._repo, sha)

    def entry(self, path: str) -> tuple[int, bytes] | None:
        """``(mode, sha)`` of the tree entry at ``path``, or None."""
        if self.tree_id is None:
            return None
        mode, sha = DIR_MODE, self.tree_id
        # a name from the command line that is not UTF-8: its own bytes (never found)
        for part in path.encode("utf-8", "surrogateescape").split(b"/"):
            if mode != DIR_MODE:
                return None
            tree = self._tree(sha)
            if part not in tree:
                return None
            mode, sha = tree[part]
        return mode, sha

    def read(self, path: str) -> bytes | None:
        """The bytes of a file at this commit, or None when absent."""
        entry = self.entry(path)
        if entry is None or entry[0] == DIR_MODE:
            return None
        data = self._files.get(entry[1])
        if data is not None:
            return data
        if self._checked_out is not None:
            data = self._checked_out.read(path.encode("utf-8", "surrogateescape"), entry[1])
        if data is None:
            data = self._blob(entry[1], path)
        if len(self._files) >= _FILES_KEPT or self._kept + len(data) > _BYTES_KEPT:
            self._files.clear()
            self._kept = 0
        if len(data) <= _BYTES_KEPT:
            self._files[entry[1]] = data
            self._kept += len(data)
        return data

    def blob_id(self, path: str) -> str | None:
        """The blob id of a file at this commit, or None."""
        entry = self.entry(path)
        return None if entry is None or entry[0] == DIR_MODE else entry[1].decode()

    def listdir(self, path: str) -> list[str]:
        """Names directly under a directory (empty when absent)."""
        entry = (DIR_MODE, self.tree_id) if path == "" else self.entry(path)
        if entry is None or entry[0] != DIR_MODE or entry[1] is None:
            return []
        return [name.decode() for name in self._tree(entry[1])]

    def children(self, path: str) -> dict[str, str]:
        """Name → object id (a tree's or a blob's) of each entry directly under ``path``."""
        entry = (DIR_MODE, self.tree_id) if path == "" else self.entry(path)
        if entry is None or entry[0] != DIR_MODE or entry[1] is None:
            return {}
        return {item.path.decode(): item.sha.decode() for item in self._tree(entry[1]).items()}

    def files(self, prefix: str = "") -> Iterator[tuple[str, str]]:
        """Every file ``(path, blob_id)`` under ``prefix`` (the whole tree when empty)."""
        entry = (DIR_MODE, self.tree_id) if prefix == "" else self.entry(prefix)
        if entry is None or entry[0] != DIR_MODE or entry[1] is None:
            return
        base = prefix + "/" if prefix else ""
        for item in iter_tree_contents(self._repo.object_store, ObjectID(entry[1])):
            yield base + item.path.decode(), item.sha.decode()

    def blob(self, blob_id: str) -> bytes:
        """Raw bytes of a blob by id."""
        return self._blob(blob_id.encode(), blob_id)

    def _blob(self, sha: bytes, shown: str) -> bytes:
        """The bytes of blob ``sha``; ``shown`` names it when it is not a file."""
        obj = self._object(sha)
        if not isinstance(obj, Blob):
            raise CorruptStoreError(f"{shown} is not a file; run xbrain doctor.")
        return bytes(obj.data)


def private_file(path: Path) -> None:
    """Drop group and other permission bits (0444 → 0400)."""
    os.chmod(path, os.lstat(path).st_mode & 0o700)
