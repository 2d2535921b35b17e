"""Checking a pack a foreign repository sent before dulwich indexes it, and a pack of
the store for damage (``pack_damage``: ``doctor``, ``gc``).

dulwich inflates every object of a received pack to index it, each one whole in memory.
A small pack can declare huge objects (a gigabyte of zeros compresses to a megabyte), so
the declared sizes are read first: every object's header, and for a delta the size of
the object it builds. Each zlib stream is inflated in small pieces that are thrown away,
never more than its header declared, only to find where the next object begins.
"""

from __future__ import annotations

import hashlib
import mmap
import os
import zlib
from pathlib import Path
from typing import NamedTuple

from ..errors import InvalidInputError

__all__ = [
    "NO_LIMIT",
    "PackBound",
    "amount",
    "check_pack",
    "delta_sizes",
    "entry_base",
    "entry_header",
    "pack_damage",
    "packed_size",
]

_OFS_DELTA, _REF_DELTA = 6, 7
_KINDS = {1, 2, 3, 4, _OFS_DELTA, _REF_DELTA}
_CHUNK = 1 << 16  # compressed bytes fed at a time
_OUT = 1 << 20  # inflated bytes made at a time (thrown away)
_VERSIONS = (b"\0\0\0\2", b"\0\0\0\3")
NO_LIMIT = 1 << 62  # a PackBound field that bounds nothing


class PackBound(NamedTuple):
    """How much a foreign repository may send: bytes on the wire, objects, and inflated
    bytes per object and in all."""

    max_wire: int
    max_objects: int
    max_object: int
    max_total: int
    advice: str = ""  # what to do instead, after a refusal for size (" Import …")


def check_pack(data: bytes | mmap.mmap, bound: PackBound, what: str) -> None:
    """Refuse (InvalidInputError naming ``what``) a pack over ``bound`` or malformed.

    The refusal is raised anew once the walk's frames are gone: raised from inside them,
    its traceback would keep slices of ``data`` alive, and closing a map of it would then
    fail ("cannot close exported pointers exist") in place of the refusal.
    """
    refusal = None
    with memoryview(data) as view:
        try:
            _check(view, bound, what)
        except InvalidInputError as exc:
            refusal = exc.message
    if refusal is not None:
        raise InvalidInputError(refusal)


def _check(view: memoryview, bound: PackBound, what: str) -> None:
    """Walk the header, every object (its header, then its zlib stream), the checksum."""
    if (
        len(view) < 32
        or view[:4].tobytes() != b"PACK"
        or int.from_bytes(view[4:8], "big") not in (2, 3)
    ):
        raise InvalidInputError(f"{what} sent a malformed pack.")
    count = int.from_bytes(view[8:12], "big")
    if count > bound.max_objects:
        raise InvalidInputError(
            f"{what} sent {count:,} objects; the limit is {bound.max_objects:,}.{bound.advice}"
        )
    pos, total = 12, 0
    for _ in range(count):
        kind, size, pos = _header(view, pos, what)
        _fits(size, bound, what)
        end, head = _inflate(view, pos, size, what)
        if kind in (_OFS_DELTA, _REF_DELTA):
            try:
                _, size = delta_sizes(head)  # what the delta builds
            except ValueError:
                raise InvalidInputError(f"{what} sent a malformed delta.") from None
            _fits(size, bound, what)
        total += size
        if total > bound.max_total:
            raise InvalidInputError(
                f"{what} sent more than {amount(bound.max_total)} of objects, the limit."
                + bound.advice
            )
        pos = end
    if len(view) - pos != 20:  # what follows the last object is the pack's checksum
        raise InvalidInputError(f"{what} sent a malformed pack.")


def amount(size: int) -> str:
    """A limit as people say it: ``64 MiB``, or its bytes when not whole mebibytes."""
    return f"{size >> 20} MiB" if size and size % (1 << 20) == 0 else f"{size:,} bytes"


def _fits(size: int, bound: PackBound, what: str) -> None:
    if size > bound.max_object:
        raise InvalidInputError(
            f"{what} holds an object of {size:,} bytes; the limit is {amount(bound.max_object)}."
            + bound.advice
        )


def _header(view: memoryview, pos: int, what: str) -> tuple[int, int, int]:
    try:
        return entry_header(view, pos)
    except IndexError:
        raise InvalidInputError(f"{what} sent a truncated pack.") from None
    except ValueError:
        raise InvalidInputError(f"{what} sent a malformed pack.") from None


def entry_header(data: bytes | memoryview | mmap.mmap, pos: int) -> tuple[int, int, int]:
    """A pack entry's kind, its declared size and where its zlib data begins.

    ValueError when the header is malformed, IndexError when it is cut short.
    """
    kind, size, _, pos = entry_base(data, pos)
    return kind, size, pos


def entry_base(
    data: bytes | memoryview | mmap.mmap, pos: int
) -> tuple[int, int, int | bytes | None, int]:
    """A pack entry's kind, its declared size, its base (an offset delta's distance
    back, a ref delta's id, else None) and where its zlib data begins.

    ValueError when the header is malformed (a size or a distance that runs on, a
    distance of 0, an unknown kind), IndexError when it is cut short.
    """
    byte = data[pos]
    kind, size, shift = (byte >> 4) & 7, byte & 15, 4
    pos += 1
    while byte & 0x80:
        if shift > 63:
            raise ValueError("a pack entry's size runs on")
        byte = data[pos]
        size |= (byte & 0x7F) << shift
        shift, pos = shift + 7, pos + 1
    if kind not in _KINDS:
        raise ValueError(f"no pack entry has kind {kind}")
    base: int | bytes | None = None
    if kind == _OFS_DELTA:  # the base's distance back: seven bits a byte, high first
        byte, pos = data[pos], pos + 1
        distance = byte & 0x7F
        for _ in range(9):
            if not byte & 0x80:
                break
            byte, pos = data[pos], pos + 1
            distance = ((distance + 1) << 7) | (byte & 0x7F)
        else:
            if byte & 0x80:
                raise ValueError("a delta's base offset runs on")
        if distance == 0:
            raise ValueError("a delta is its own base")
        base = distance
    elif kind == _REF_DELTA:  # the base's id
        base = bytes(data[pos : pos + 20])
        if len(base) != 20:
            raise IndexError("a delta's base id is cut short")
        pos += 20
    return kind, size, base, pos


def delta_sizes(head: bytes) -> tuple[int, int]:
    """A delta's base size and result size, from its first inflated bytes (two varints,
    seven bits a byte, low first). ValueError when they are cut short."""
    values, value, shift = [], 0, 0
    for byte in head:
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            values.append(value)
            if len(values) == 2:
                return values[0], values[1]
            value, shift = 0, 0
        elif shift > 63:
            break
    raise ValueError("a delta's sizes are cut short")


def packed_size(entry: bytes) -> int | None:
    """The inflated size of a stored pack entry from its first bytes (a delta: its result's),
    without inflating it; None when they cannot tell."""
    try:
        kind, size, at = entry_header(entry, 0)
        if kind not in (_OFS_DELTA, _REF_DELTA):
            return size
        return delta_sizes(zlib.decompressobj().decompress(entry[at:], 32))[1]
    except (IndexError, ValueError, zlib.error):
        return None


def _inflate(view: memoryview, pos: int, size: int, what: str) -> tuple[int, bytes]:
    """Where the zlib stream at ``pos`` ends, and its first bytes (a delta's header).

    Inflates at most ``_OUT`` bytes a call and never more than ``size`` + 1 in all: a
    stream longer than declared is refused.
    """
    stream = zlib.decompressobj()
    made, head = 0, b""
    step = min(max(size + (size >> 6) + 64, 64), _CHUNK)  # most streams end in one piece
    try:
        while not stream.eof:
            piece: bytes | memoryview = stream.unconsumed_tail
            if not piece:
                piece = view[pos : pos + step]
                if not piece:
                    raise InvalidInputError(f"{what} sent a truncated pack.")
                pos, step = pos + len(piece), _CHUNK
            out = stream.decompress(piece, min(size - made + 1, _OUT))
            made += len(out)
            if made > size:
                raise InvalidInputError(f"{what} sent an object larger than its header says.")
            if len(head) < 20:
                head += out[: 20 - len(head)]
    except zlib.error:
        raise InvalidInputError(f"{what} sent a damaged pack.") from None
    if made != size:
        raise InvalidInputError(f"{what} sent an object smaller than its header says.")
    return pos - len(stream.unused_data), head


def pack_damage(pack: Path, hash_size: int = 20) -> str | None:
    """What is wrong with the store's pack ``pack`` (``.pack``; its ``.idx`` beside it),
    or None: its header, its checksum against its bytes, and its index's checksums (of
    itself, and of the pack it indexes). Reads every byte of both, a piece at a time."""
    pack_sum = ending = b""
    for path, what in ((pack, "the pack"), (pack.with_suffix(".idx"), "its index")):
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size - hash_size
            head = handle.read(12)
            if path is pack and (head[:4] != b"PACK" or head[4:8] not in _VERSIONS):
                return "the pack has no pack header"
            if size < (12 if path is pack else 12 + hash_size):  # an index ends with the pack's sum
                return f"{what} is cut short"
            summed = hashlib.new("sha1" if hash_size == 20 else "sha256", head)
            left = size - len(head)
            while left > 0:
                piece = handle.read(min(left, _OUT))
                if not piece:
                    return f"{what} is cut short"
                summed.update(piece)
                left -= len(piece)
                ending = (ending + piece[-hash_size:])[-hash_size:]  # an index: its pack's sum
            trailer = handle.read(hash_size)
        if summed.digest() != trailer:
            return f"{what} does not match its checksum (damaged or cut short)"
        if path is pack:
            pack_sum = trailer
        elif ending != pack_sum:
            return "its index is another pack's"
    return None
