"""One pack of new objects, written with its index from what the writer already knows.

dulwich's ``add_objects`` writes the pack, then reads it back whole to index it
(inflating and hashing every object again): for a batch of 1,000 records about a tenth
of the write. Here the pack's index comes from the offsets and checksums the writer
returns. The same steps as dulwich's, in the same order: a temporary ``tmp*.pack``
(synced), renamed to ``pack-<name>.pack``, then its index written (and synced) beside
it; a kill in between leaves a leftover ``pack_leftovers`` names, never a pack whose
index points at the wrong bytes, and the ref only moves after the index landed.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Sequence

from dulwich.file import GitFile
from dulwich.object_store import PACK_MODE, DiskObjectStore
from dulwich.objects import ShaFile
from dulwich.pack import (
    UnpackedObject,
    full_unpacked_object,
    iter_sha1,
    write_pack_data,
    write_pack_index,
)

__all__ = ["write_pack"]


def write_pack(store: DiskObjectStore, objects: Sequence[ShaFile]) -> None:
    """Add ``objects`` to ``store`` as one pack (whole objects, no deltas)."""
    fd, tmp = tempfile.mkstemp(dir=store.pack_dir, suffix=".pack")
    try:
        with os.fdopen(fd, "wb") as handle:
            entries, checksum = write_pack_data(
                handle.write,
                (_whole(obj) for obj in objects),
                store.object_format,
                num_records=len(objects),
                compression_level=_level(store.pack_compression_level),
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


def _whole(obj: ShaFile) -> UnpackedObject:
    """``obj`` to pack, its bytes as one chunk: a tree serializes as a chunk per entry, and
    the pack writer compresses chunk by chunk (a batch into a 100,000-record store: 100,000
    zlib calls for the 256 ``resources/<aa>/`` trees)."""
    unpacked = full_unpacked_object(obj)
    chunks = unpacked.decomp_chunks
    if len(chunks) > 1:
        unpacked.decomp_chunks = [b"".join(chunks)]
    return unpacked
