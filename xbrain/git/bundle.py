"""Git bundles: a store's ``main`` as one file (``backup create``), and back (``clone``).

A bundle holds every object reachable from ``main`` (every kind of record, skills, state
files, the whole history) and the one ref; ``git clone FILE`` reads it too. A bundle to
restore from is input from outside: its size is bounded before anything is read, its
header line by line (length and count), a bundle needing commits it does not hold (an
incremental one) or naming no ``main`` is refused, and its pack is spooled and checked
against a :class:`PackBound` (:mod:`.packcheck`) before dulwich indexes it. The caller
then checks the commit's tree (the store's hostile-tree gate) before any ref moves.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import re
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from dulwich.bundle import Bundle, write_bundle
from dulwich.object_format import ObjectFormat
from dulwich.objects import Commit, ObjectID
from dulwich.pack import UnpackedObject
from dulwich.refs import Ref

from ..errors import CorruptStoreError, InvalidInputError, NotFoundError, XbrainError, no_space
from .objects import DAMAGE, MAIN, CommitId, disk_full, private_file, private_umask
from .packcheck import PackBound, amount, check_pack
from .repo import Repository

__all__ = ["Bundles"]

_HEADERS = {b"# v2 git bundle\n": 2, b"# v3 git bundle\n": 3}
_MAX_LINE = 4096  # a header line: an object id and a ref name
_MAX_LINES = 1000  # header lines (a store's bundle has one ref)
_REF_LINE = re.compile(rb"([0-9a-f]{40}) (HEAD|refs/[^\x00-\x20\x7f]+)\n")
_CHUNK = 1 << 20


class Bundles(Repository):
    """Write ``main`` as a bundle; read a bundle's objects into this repository."""

    def write_bundle(self, target: Path) -> tuple[CommitId, int]:
        """Write ``main`` with its whole history to ``target`` (0600, fsynced, replacing
        it in one rename); the commit it holds (read once: a write meanwhile moves
        ``main`` past it, never into it) and the file's size."""
        head = self.head()
        if head is None:
            raise NotFoundError("The store has no commits to back up.")
        try:
            return self._write_bundle(target, head)
        except DAMAGE:  # a damaged pack (its error's traceback dropped: it maps the pack)
            pass
        raise CorruptStoreError(
            "A pack or object of the store is damaged; nothing was backed up. Run xbrain doctor."
        )

    def _write_bundle(self, target: Path, head: CommitId) -> tuple[CommitId, int]:
        sha = ObjectID(head.encode())
        count, objects = self._repo.generate_pack_data(set(), {sha})
        bundle = Bundle()
        bundle.version, bundle.capabilities, bundle.prerequisites = 2, {}, []
        bundle.references = {Ref(b"HEAD"): sha, MAIN: sha}  # HEAD: git clone checks out main
        bundle.pack_data = _Objects(count, objects, self._repo.object_format)
        with private_umask():  # new parent directories 0700, as export-store makes them
            target.parent.mkdir(parents=True, exist_ok=True)
            # the temporary name: the start of the target's (any name must fit beside it)
            fd, temp = tempfile.mkstemp(prefix=f".{target.name[:40]}.", dir=target.parent)
        try:
            with os.fdopen(fd, "wb") as handle:
                try:
                    write_bundle(handle, bundle)
                finally:
                    bundle.close()
                handle.flush()
                os.fsync(handle.fileno())
                size = handle.tell()
            os.replace(temp, target)
        except BaseException as exc:
            os.unlink(temp)
            if isinstance(exc, OSError) and no_space(exc):
                raise disk_full() from None
            raise
        return head, size

    def read_bundle(self, path: Path, bound: PackBound, what: str) -> CommitId:
        """Add the objects of the bundle at ``path`` to this repository (unreferenced:
        the caller checks them first); the commit its ``main`` names. A file that is not
        a complete bundle of a ``main`` within ``bound`` is an InvalidInputError naming
        ``what``."""
        try:
            # non-blocking: a FIFO put in the bundle's place never hangs the open
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
            with os.fdopen(fd, "rb") as handle:
                info = os.fstat(handle.fileno())
                if not stat.S_ISREG(info.st_mode):
                    raise InvalidInputError(f"{what} is not a regular file.")
                if info.st_size > bound.max_wire:
                    raise InvalidInputError(
                        f"{what} is larger than {amount(bound.max_wire)}, the limit."
                    )
                main = _read_header(handle, what)
                self._add_pack(handle, bound, what)
        except XbrainError:
            raise
        except OSError as exc:
            if no_space(exc):
                raise disk_full() from None
            raise InvalidInputError(f"Could not read {what}: {exc.strerror or exc}.") from None
        except Exception as exc:  # dulwich's many ways of saying a pack is damaged
            raise InvalidInputError(f"{what} is damaged ({type(exc).__name__}).") from None
        try:
            found = self._repo.object_store[main]
        except KeyError:
            found = None
        if not isinstance(found, Commit):
            raise InvalidInputError(f"{what} is damaged: it lacks the commit its main names.")
        return CommitId(main.decode())

    def _add_pack(self, handle: BinaryIO, bound: PackBound, what: str) -> None:
        """Spool the rest of ``handle`` (the pack), check it against ``bound``, index it."""
        with tempfile.TemporaryFile(dir=str(self.control_dir)) as spool:
            received = 0
            while chunk := handle.read(_CHUNK):
                received += len(chunk)
                if received > bound.max_wire:  # the file grew while it was read
                    raise InvalidInputError(
                        f"{what} is larger than {amount(bound.max_wire)}, the limit."
                    )
                spool.write(chunk)
            if not received:
                raise InvalidInputError(f"{what} is damaged: it holds no objects.")
            spool.flush()
            mapped = mmap.mmap(spool.fileno(), 0, access=mmap.ACCESS_READ)
            try:
                check_pack(mapped, bound, what)
            finally:  # a refusal's traceback may still hold a view of the map
                with contextlib.suppress(BufferError):
                    mapped.close()
            spool.seek(0)
            with private_umask():
                self._repo.object_store.add_thin_pack(spool.read, None)
            for item in (self.control_dir / "objects" / "pack").iterdir():
                if item.lstat().st_mode & 0o077:
                    private_file(item)  # dulwich makes packs 0444


class _Objects:
    """The objects of a bundle being written, streamed once into its pack (what
    ``dulwich.bundle.write_bundle`` reads)."""

    def __init__(self, count: int, objects: Iterator[UnpackedObject], fmt: ObjectFormat) -> None:
        self.count, self.objects, self.object_format = count, objects, fmt

    def __len__(self) -> int:
        return self.count

    def iter_unpacked(self) -> Iterator[UnpackedObject]:
        return self.objects

    def close(self) -> None:
        self.objects = iter(())


def _read_header(handle: BinaryIO, what: str) -> ObjectID:
    """The object id of ``refs/heads/main`` from a bundle's header (bounded), leaving
    ``handle`` at the pack."""
    version = _HEADERS.get(handle.readline(_MAX_LINE))
    if version is None:
        raise InvalidInputError(f"{what} is not a git bundle (xbrain backup create makes one).")
    refs: dict[bytes, bytes] = {}
    for _ in range(_MAX_LINES):
        line: bytes = handle.readline(_MAX_LINE)
        if not line.endswith(b"\n"):
            raise InvalidInputError(f"{what} is damaged: its header is cut short.")
        if line == b"\n":
            break
        if line.startswith(b"@"):
            if version < 3 or line not in (b"@object-format=sha1\n",):
                shown = line[:60].decode("utf-8", "backslashreplace").rstrip()
                raise InvalidInputError(f"{what} needs a capability xbrain lacks: {shown}")
            continue
        if line.startswith(b"-"):
            raise InvalidInputError(
                f"{what} is an incremental bundle (it needs commits it does not hold); "
                "restore from a full one (xbrain backup create)."
            )
        match = _REF_LINE.fullmatch(line)
        if match is None:
            raise InvalidInputError(f"{what} is damaged: a header line is not a ref.")
        refs[match.group(2)] = match.group(1)
    else:
        raise InvalidInputError(f"{what} names more than {_MAX_LINES:,} refs.")
    main = refs.get(MAIN)
    if main is None:
        raise InvalidInputError(f"{what} has no main branch; it is not an xbrain store.")
    return ObjectID(main)
