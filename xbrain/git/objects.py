"""Git objects as plain data: one commit's tree read through dulwich, and helpers.

dulwich types and exceptions never leave the ``xbrain.git`` package; paths are ``str``
outside and UTF-8 ``bytes`` inside.
"""

from __future__ import annotations

import contextlib
import os
import re
import zlib
from collections.abc import Iterable, Iterator
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
from dulwich.objects import Blob, Commit, ObjectID, RawObjectID, ShaFile, Tree, hex_to_sha
from dulwich.pack import Pack
from dulwich.refs import Ref
from dulwich.repo import Repo

from ..errors import (
    BusyError,
    CorruptStoreError,
    ProviderError,
    XbrainError,
)

__all__ = ["CommitId", "CommitInfo", "Leaf", "Snapshot", "load_object", "private_umask"]

CommitId = NewType("CommitId", str)
T = TypeVar("T")

MAIN = Ref(b"refs/heads/main")
# git's checkouts in a store write files as stored, whatever a global autocrlf says
PLAIN_LINE_ENDINGS = ((b"core",), b"autocrlf", b"false")
FILE_MODE = 0o100644
DIR_MODE = 0o040000
MAX_DEPTH = 8  # deeper than any path of the layout; bounds the walk of a hostile tree
PENDING_MARKER = "xbrain/worktree-pending.json"
OBJECTS_MARKER = "xbrain/objects-pending"  # the loose objects a write is adding


# an object's name: hex of a SHA-1 or a SHA-256 (dulwich asserts on anything else)
OBJECT_NAME = re.compile(rb"[0-9a-f]{40}|[0-9a-f]{64}")

DAMAGE = (
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


class Snapshot:
    """Read-only view of one commit's tree, with a small tree cache."""

    def __init__(self, repo: Repo, commit: CommitId | None) -> None:
        self._repo = repo
        self.commit = commit
        self._trees: dict[bytes, Tree] = {}
        self._files: dict[bytes, bytes] = {}  # read()'s blobs by id: a transaction reads
        # each catalog and URL shard it changes three times (load, compare, compare again)
        self._kept = 0  # their bytes
        self._near: _Near | None = None  # made on the first object read past the commit
        self.tree_id: bytes | None = None
        if commit is not None:
            obj = load_object(repo, commit.encode())
            if not isinstance(obj, Commit):
                raise CorruptStoreError(f"{commit} is not a commit.")
            self.tree_id = obj.tree

    def _tree(self, sha: bytes) -> Tree:
        tree = self._trees.get(sha)
        if tree is None:
            obj = self._object(sha)
            if not isinstance(obj, Tree):
                raise CorruptStoreError("Store tree is damaged; run xbrain doctor.")
            tree = self._trees[sha] = obj
        return tree

    def _object(self, sha: bytes) -> ShaFile:
        if self._near is None:
            self._near = _Near(self._repo)
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


class _Near:
    """A snapshot's object reads, where the last object was found first.

    dulwich looks an object up in every pack in turn, asks for a multi-pack index (a
    ``stat``) each time, and for a loose object first rescans the pack directory. The
    objects a commit wrote sit together (one pack, or all loose), and a reader of one
    record reads several of them in a row: a skill's seven objects, read from a store of
    79 packs, cost six times what they cost from a few. So the pack (or the loose
    directory) that held the last object is tried first, then the others. Only a plain
    hit is answered here, checked against its id as dulwich checks it; a miss anywhere,
    a damaged object, a pack gone since: None, and :func:`load_object` decides as before.
    """

    def __init__(self, repo: Repo) -> None:
        store = repo.object_store
        self._format = store.object_format
        self._packs: list[Pack] = list(getattr(store, "packs", ()))
        self._loose = getattr(store, "path", None)
        self._loose_limit = getattr(store, "loose_object_size_limit", None)  # as dulwich reads
        self._last: Pack | str | None = None  # a pack, "loose", or None

    def load(self, sha: bytes) -> ShaFile | None:
        hexsha = ObjectID(sha)
        try:
            raw = hex_to_sha(hexsha)
            last = self._last
            if last == "loose" and (found := self._from_loose(hexsha)) is not None:
                return found
            if isinstance(last, Pack) and (found := self._from_pack(last, raw, hexsha)) is not None:
                return found
            for pack in self._packs:
                if pack is not last and (found := self._from_pack(pack, raw, hexsha)) is not None:
                    self._last = pack
                    return found
            if last != "loose" and (found := self._from_loose(hexsha)) is not None:
                self._last = "loose"
                return found
        except Exception:  # anything but a plain hit: dulwich's own lookup decides
            return None
        return None

    def _from_pack(self, pack: Pack, raw: bytes, hexsha: ObjectID) -> ShaFile | None:
        try:
            type_num, data = pack.get_raw(RawObjectID(raw))
        except KeyError:
            return None
        return ShaFile.from_raw_string(
            type_num, data, verify_sha=hexsha, object_format=self._format
        )

    def _from_loose(self, hexsha: ObjectID) -> ShaFile | None:
        if not isinstance(self._loose, str):
            return None
        name = hexsha.decode("ascii")
        path = os.path.join(self._loose, name[:2], name[2:])
        if not isinstance(self._loose_limit, int):
            return None
        try:
            found = ShaFile.from_path(path, object_format=self._format, max_size=self._loose_limit)
        except FileNotFoundError:
            return None
        return found if found.id == hexsha else None  # checked against its id, as dulwich does
