"""Packs merged by copying their entries: what is compressed and deltified stays so.

A consolidation used to read every object of the packs it merged (inflate, parse,
serialize), search each one a delta again and compress it again: about half a second a
MB here, so packs past a few MB were never merged by a write's upkeep. A pack that went
through a consolidation already holds its objects as deltas against each other, and
their compressed bytes are good as they are: ``PackWriter.copy`` writes each entry's
compressed bytes unchanged, with a new header (a delta's base is found again by its id,
so its distance is the new pack's). Reading a pack's entries costs one header parse
each, their extents coming from the offsets its index lists; each extent is checked
against the CRC the index keeps for it before anything is copied, so a damaged pack
is never merged into a new one.

The new pack is written to a temporary file (synced), its index written beside it
under its final name (synced), and only then the pack renamed into place, so that
neither a reader nor a write ever sees a merged pack without its index (a write removes
such a pack as a leftover of its own); the caller removes the merged packs only after
``land`` returns.
"""

from __future__ import annotations

import contextlib
import hashlib
import mmap
import os
import struct
import tempfile
import zlib
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import NamedTuple

from dulwich.object_store import PACK_MODE
from dulwich.pack import iter_sha1, write_pack_index

from .packcheck import entry_base

__all__ = ["TEMP_PREFIX", "PackEntry", "PackWriter", "SourcePack", "leftovers", "read_source"]

OFS_DELTA = 6
_SHA = 20  # bytes of a SHA-1 object id (xbrain stores are SHA-1)
MAX_CHAIN = 50  # a copied delta deeper than this (git's own default) is written whole
_FLUSH = 1 << 20
_Whole = Callable[[bytes], tuple[int, bytes]]  # an object's type and bytes, by its binary id
# a merge's temporary files: never a write's leftovers (``tmp*.pack``, ``*.lock``), so a
# write never removes a merge's file while a merge runs beside it
TEMP_PREFIX = "xbrain-merge-"


class PackEntry(NamedTuple):
    """One entry of a pack: its object, its type (a delta's is the delta's), its
    inflated size, its base's id (a delta) and where its compressed bytes lie."""

    sha: bytes
    type_num: int
    size: int
    base: bytes | None
    start: int
    end: int


class SourcePack(NamedTuple):
    """A pack opened for copying: its bytes and its entries in pack order."""

    data: mmap.mmap
    entries: list[PackEntry]


def read_source(pack: Path, index: Iterable[tuple[bytes, int, int | None]]) -> SourcePack:
    """The entries of ``pack`` from what its ``index`` lists (id, offset, CRC), each
    extent checked against its CRC; ``ValueError`` when the pack does not match."""
    rows = sorted((offset, bytes(sha), crc) for sha, offset, crc in index)
    with open(pack, "rb") as handle:
        data = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    try:
        if data[:4] != b"PACK" or struct.unpack(">I", data[8:12])[0] != len(rows):
            raise ValueError(f"{pack.name} does not match its index")
        by_offset = {offset: sha for offset, sha, _ in rows}
        entries = []
        for i, (offset, sha, crc) in enumerate(rows):
            end = rows[i + 1][0] if i + 1 < len(rows) else len(data) - _SHA
            if end <= offset or (crc is not None and zlib.crc32(data[offset:end]) != crc):
                raise ValueError(f"{pack.name}: the entry at {offset} does not match its index")
            try:
                type_num, size, found, at = entry_base(data, offset)
            except IndexError:
                raise ValueError(f"{pack.name}: the entry at {offset} is cut short") from None
            if at >= end:
                raise ValueError(f"{pack.name}: the entry at {offset} is cut short")
            base = found if isinstance(found, bytes) else None
            if isinstance(found, int):
                base = by_offset.get(offset - found)
                if base is None:
                    raise ValueError(f"{pack.name}: a delta at {offset} has no base")
            if base == sha:
                raise ValueError(f"{pack.name}: a delta at {offset} is its own base")
            entries.append(PackEntry(sha, type_num, size, base, at, end))
    except BaseException:
        data.close()
        raise
    return SourcePack(data, entries)


def _size_header(type_num: int, size: int) -> bytearray:
    out = bytearray()
    byte = (type_num << 4) | (size & 15)
    size >>= 4
    while size:
        out.append(byte | 0x80)
        byte = size & 0x7F
        size >>= 7
    out.append(byte)
    return out


def _ofs_header(distance: int) -> bytes:
    out = [distance & 0x7F]
    distance >>= 7
    while distance:
        distance -= 1
        out.insert(0, 0x80 | (distance & 0x7F))
        distance >>= 7
    return bytes(out)


class PackWriter:
    """A new pack of exactly ``count`` objects, written as entries come (each object
    once: a second copy of an id is skipped), landed with its index by ``land``.

    A delta is written only after its base, so every delta's chain is known when it is
    written and bounded by ``MAX_CHAIN`` whatever order the entries come in: a copied
    delta whose base is not written yet waits for it (its place only, nothing read), and
    is written right after it."""

    def __init__(
        self, pack_dir: Path, count: int, fsync: bool, level: int = -1, by_content: bool = False
    ) -> None:
        self._dir, self._count, self._fsync, self._level = pack_dir, count, fsync, level
        # named by its checksum (as git names packs), not by its objects: a merge that
        # writes the same objects anew (``packmerge``'s redo) must not be taken for the
        # pack it replaces
        self._by_content = by_content
        fd, self._tmp = tempfile.mkstemp(dir=pack_dir, prefix=TEMP_PREFIX)
        self._handle = os.fdopen(fd, "wb")
        self._sha = hashlib.sha1()  # git's pack checksum
        self._buffer = bytearray()
        self._offset = 0
        self.offsets: dict[bytes, tuple[int, int]] = {}  # id: offset, crc
        self.depth: dict[bytes, int] = {}
        # a base not written yet: the copied deltas against it, written right after it
        self._waiting: dict[bytes, list[tuple[SourcePack, PackEntry, _Whole]]] = {}
        self._put(b"PACK" + struct.pack(">II", 2, count))

    def _put(self, chunk: bytes | bytearray | memoryview) -> None:
        self._sha.update(chunk)
        self._buffer += chunk
        self._offset += len(chunk)
        if len(self._buffer) >= _FLUSH:
            self._handle.write(self._buffer)
            self._buffer.clear()

    def _entry(self, sha: bytes, head: bytes | bytearray, body: bytes | memoryview) -> None:
        self.offsets[sha] = (self._offset, zlib.crc32(body, zlib.crc32(head)))
        self._put(head)
        self._put(body)

    def _delta_head(self, base: bytes, size: int) -> bytes:
        """The header of a delta of ``size`` bytes against ``base`` (written already):
        the distance back to it."""
        return bytes(_size_header(OFS_DELTA, size)) + _ofs_header(
            self._offset - self.offsets[base][0]
        )

    def copy(self, source: SourcePack, entry: PackEntry, whole: _Whole) -> None:
        """Copy ``entry`` of ``source`` as it is compressed; a delta whose chain would
        pass ``MAX_CHAIN`` here is written whole (``whole(sha)``: its type and bytes), a
        delta whose base is not written yet once the base is."""
        if entry.sha in self.offsets:
            return
        if entry.base is not None and entry.base not in self.offsets:
            self._waiting.setdefault(entry.base, []).append((source, entry, whole))
            return
        self._copy(source, entry, whole)
        self._release(entry.sha)

    def _copy(self, source: SourcePack, entry: PackEntry, whole: _Whole) -> None:
        """Write ``entry`` (a delta: its base is written)."""
        body = memoryview(source.data)[entry.start : entry.end]
        try:
            if entry.base is None:
                self.depth[entry.sha] = 0
                self._entry(entry.sha, _size_header(entry.type_num, entry.size), body)
                return
            depth = self.depth[entry.base] + 1
            if depth > MAX_CHAIN:
                type_num, raw = whole(entry.sha)
                self.depth[entry.sha] = 0
                compressed = zlib.compress(raw, self._level)
                self._entry(entry.sha, _size_header(type_num, len(raw)), compressed)
                return
            self.depth[entry.sha] = depth
            self._entry(entry.sha, self._delta_head(entry.base, entry.size), body)
        finally:
            body.release()

    def _release(self, sha: bytes) -> None:
        """Write the copied deltas that waited for ``sha``, and theirs in turn."""
        todo = [sha]
        while todo:
            for source, entry, whole in self._waiting.pop(todo.pop(), ()):
                if entry.sha not in self.offsets:
                    self._copy(source, entry, whole)
                    todo.append(entry.sha)

    def add(self, sha: bytes, type_num: int, raw: bytes, base: bytes | None = None) -> None:
        """Write an object (``raw``: its bytes, or with ``base`` a delta against it,
        which must be written already: ``ValueError`` if not)."""
        if sha in self.offsets:
            return
        if base is not None and base not in self.offsets:
            raise ValueError("a delta is added before its base")
        compressed = zlib.compress(raw, self._level)
        if base is None:
            self.depth[sha] = 0
            self._entry(sha, _size_header(type_num, len(raw)), compressed)
        else:
            self.depth[sha] = self.depth[base] + 1
            self._entry(sha, self._delta_head(base, len(raw)), compressed)
        self._release(sha)

    def abort(self) -> None:
        """Drop the temporary pack."""
        self._handle.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self._tmp)

    def land(self, index_version: int | None) -> str:
        """Finish the pack and sync it, write its index beside it (synced), then rename
        the pack into place: readers (git's and dulwich's) see a pack once both files
        are there, and a kill before leaves only ``TEMP_PREFIX`` files and an index
        without its pack (``leftovers``). The new pack's basename (``pack-<name>``)."""
        try:
            if len(self.offsets) != self._count or self._waiting:
                raise ValueError("a merged pack lacks an object or a delta's base")
            self._handle.write(self._buffer + self._sha.digest())
            self._handle.flush()
            if self._fsync:
                os.fsync(self._handle.fileno())
            self._handle.close()
            checksum = self._sha.digest()
            rows = sorted((sha, offset, crc) for sha, (offset, crc) in self.offsets.items())
            if self._by_content:
                name = "pack-" + checksum.hex()
            else:
                name = "pack-" + iter_sha1(r[0] for r in rows).decode()
            pack, index = self._dir / f"{name}.pack", self._dir / f"{name}.idx"
            if pack.exists() and index.exists():  # the same objects are packed already
                os.unlink(self._tmp)
                return name
            fd, tmp_index = tempfile.mkstemp(dir=self._dir, prefix=TEMP_PREFIX)
            try:
                with os.fdopen(fd, "wb") as handle:
                    write_pack_index(handle, rows, checksum, version=index_version)
                    handle.flush()
                    if self._fsync:
                        os.fsync(handle.fileno())
                os.chmod(tmp_index, PACK_MODE & 0o700)
                os.rename(tmp_index, index)
            except BaseException:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(tmp_index)
                raise
            os.chmod(self._tmp, PACK_MODE & 0o700)
            os.rename(self._tmp, pack)
        except BaseException:
            self.abort()
            raise
        return name


def leftovers(pack_dir: Path) -> list[Path]:
    """What a killed merge left: its temporary files, and an index without its pack
    (hold the upkeep lock: a running merge's files look the same)."""
    try:
        names = set(os.listdir(pack_dir))
    except FileNotFoundError:
        return []
    return sorted(
        pack_dir / name
        for name in names
        if name.startswith(TEMP_PREFIX)
        or (name.endswith(".idx") and f"{name[:-4]}.pack" not in names)
    )
