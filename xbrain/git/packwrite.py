"""One pack of new objects, written with its index from what the writer already knows.

dulwich's ``add_objects`` writes the pack, then reads it back whole to index it
(inflating and hashing every object again): for a batch of 1,000 records about a tenth
of the write. Here the pack's index comes from the offsets and checksums the writer
returns. The same steps as dulwich's, in the same order: a temporary ``tmp*.pack``
(synced), renamed to ``pack-<name>.pack``, then its index written (and synced) beside
it; a kill in between leaves a leftover ``pack_leftovers`` names, never a pack whose
index points at the wrong bytes, and the ref only moves after the index landed.

The objects are compressed first, on two threads when they are many bytes (a batch into
a 100,000-record store compresses ~30 MB of trees and shards; zlib lets go of the
interpreter), then written in order, as git's pack format lays them out.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import struct
import tempfile
import zlib
from collections.abc import Callable, Sequence

from dulwich.file import GitFile
from dulwich.object_store import PACK_MODE, DiskObjectStore
from dulwich.objects import ShaFile, Tree
from dulwich.pack import (
    UnpackedObject,
    full_unpacked_object,
    iter_sha1,
    pack_object_header,
    write_pack_data,
    write_pack_index,
)

__all__ = ["write_pack"]


def write_pack(store: DiskObjectStore, objects: Sequence[ShaFile]) -> None:
    """Add ``objects`` to ``store`` as one pack (whole objects, no deltas), each once: a
    commit holds the same bytes at two paths (two directories alike, a rewrite making a
    shard again), and a pack whose header counts an object twice is one git refuses."""
    unique: dict[bytes, ShaFile] = {}
    for obj in objects:
        unique.setdefault(bytes(obj.id), obj)
    objects = list(unique.values())
    fd, tmp = tempfile.mkstemp(dir=store.pack_dir, suffix=".pack")
    try:
        with os.fdopen(fd, "wb") as handle:
            configured = store.pack_compression_level
            level = _level(configured)
            if store.object_format.oid_length == 20:  # SHA-1, git's default
                levels = [
                    _tree_level(configured) if o.type_num == Tree.type_num else level
                    for o in objects
                ]
                entries, checksum = _write_objects(handle.write, objects, levels)
            else:
                entries, checksum = write_pack_data(
                    handle.write,
                    (_whole(obj) for obj in objects),
                    store.object_format,
                    num_records=len(objects),
                    compression_level=level,
                )
            handle.flush()
            if store.fsync_object_files:
                os.fsync(handle.fileno())
        rows = sorted((sha, offset, crc) for sha, (offset, crc) in entries.items())
        base = os.path.join(store.pack_dir, "pack-" + iter_sha1(r[0] for r in rows).decode())
        if os.path.exists(base + ".idx"):  # the same objects are packed already
            os.unlink(tmp)
            return
        os.chmod(tmp, PACK_MODE & 0o700)  # read-only, and private as every store file
        os.rename(tmp, base + ".pack")
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    with GitFile(base + ".idx", "wb", mask=PACK_MODE, fsync=store.fsync_object_files) as index:
        write_pack_index(index, rows, checksum, version=store.pack_index_version)


def _level(configured: int) -> int:
    """The zlib level of a write's pack: the one git's settings ask for, else 1. zlib's
    default (6) spends 3-4 times as long on a catalog shard (8 KB of JSON) for 2.5 % less,
    and half as long again on a tree (its ids do not compress) for 2 % less: a batch into
    a 100,000-record store compresses ~25 MB (its 256 ``resources/<aa>/`` trees, ~900
    catalog and URL shards). Upkeep's merges copy them as they are or make them deltas."""
    return 1 if configured == -1 else configured


def _tree_level(configured: int) -> int:
    """A tree's zlib level: stored (0) unless git's settings ask for one. A batch of 1,000
    into a store of N resources rewrites all 256 ``resources/<aa>/`` trees, N/256 entries
    each (19 MB at 180,000): level 1 took 0.23 s of CPU for them, and 0.07 s to inflate
    when the next write reads them, to save 37 % of their bytes (20-byte ids and hex names);
    stored, 0.02 s each way. The saving comes back when upkeep merges the pack (in the
    background once packs are large): every version but a path's newest becomes a delta,
    and the newest is compressed."""
    return 0 if configured == -1 else configured


def _whole(obj: ShaFile) -> UnpackedObject:
    """``obj`` to pack, its bytes as one chunk: a tree serializes as a chunk per entry, and
    the pack writer compresses chunk by chunk (a batch into a 100,000-record store: 100,000
    zlib calls for the 256 ``resources/<aa>/`` trees)."""
    unpacked = full_unpacked_object(obj)
    chunks = unpacked.decomp_chunks
    if len(chunks) > 1:
        unpacked.decomp_chunks = [b"".join(chunks)]
    return unpacked


_PARALLEL_BYTES = 1 << 20  # fewer bytes than this are compressed by the caller alone


def _write_objects(
    write: Callable[[bytes], object], objects: Sequence[ShaFile], levels: Sequence[int]
) -> tuple[dict[bytes, tuple[int, int]], bytes]:
    """Write a SHA-1 pack of ``objects`` (whole, in order, each at its zlib level) through
    ``write``; each object's binary id → (offset, CRC-32 of its entry), and the pack's
    checksum."""
    raws = [obj.as_raw_string() for obj in objects]
    sha = hashlib.sha1()

    def put(chunk: bytes) -> None:
        sha.update(chunk)
        write(chunk)

    put(b"PACK" + struct.pack(">II", 2, len(objects)))
    offset, entries = 12, {}
    for obj, raw, body in zip(objects, raws, _compressed(raws, levels), strict=True):
        head = bytes(
            pack_object_header(obj.type_num, None, len(raw), object_format=obj.object_format)
        )
        entries[obj.sha().digest()] = (offset, zlib.crc32(body, zlib.crc32(head)))
        put(head)
        put(body)
        offset += len(head) + len(body)
    checksum = sha.digest()
    write(checksum)
    return entries, checksum


def _compressed(raws: list[bytes], levels: Sequence[int]) -> list[bytes]:
    """Each of ``raws`` as a zlib stream at its level: on two threads, each every other
    one, when there are many bytes to compress."""
    if sum(len(raw) for raw, level in zip(raws, levels, strict=True) if level) < _PARALLEL_BYTES:
        return [zlib.compress(raw, level) for raw, level in zip(raws, levels, strict=True)]
    from concurrent.futures import ThreadPoolExecutor

    def part(start: int) -> list[bytes]:
        pairs = zip(raws[start::2], levels[start::2], strict=True)
        return [zlib.compress(raw, level) for raw, level in pairs]

    out: list[bytes] = [b""] * len(raws)
    with ThreadPoolExecutor(2, thread_name_prefix="xbrain-pack") as pool:
        for start, done in enumerate(pool.map(part, (0, 1))):
            out[start::2] = done
    return out
