"""A small, fast editor for git's index file (versions 2 and 3).

dulwich's ``Index`` parses and re-serializes every entry in Python, which makes each
write cost O(entries) at ~13 µs an entry. xbrain changes a handful of paths per commit,
so this module walks the entry table with one ``struct`` read per entry, splices in the
changed entries and rewrites the file under git's own ``index.lock`` protocol. Optional
extensions (cache-tree, untracked cache, offset tables: caches git rebuilds) are dropped,
as git allows. An index of ``SPLIT_MIN`` entries or more is kept split (:mod:`.splitindex`),
on whichever base it names (git's too). Entries xbrain does not change keep their bytes
(what is staged, git's extended flags: version 3). Other required extensions (sparse
directories), a damaged or missing base or version 4 are left to dulwich (``update``
returns False); an index dulwich cannot read either is written afresh. An index holding
a merge's conflict stages is left to git until they are resolved.
"""

from __future__ import annotations

import bisect
import contextlib
import hashlib
import itertools
import os
import struct
import threading
from collections.abc import Mapping
from pathlib import Path

from . import indexbases, splitindex
from .indexentry import entry_span, version_of
from .indexfile import IndexChanged, changed_since_read, read_as, sha1_into, start_writeback

__all__ = [
    "SPLICE_MAX",
    "IndexLocked",
    "Unsupported",
    "entry_bytes",
    "in_order",
    "own_entries",
    "read_entries",
    "sort_entries",
    "update",
    "write_entries",
]

_HEADER = struct.Struct(">4sLL")
_FLAGS = struct.Struct(">H")
_STAT = struct.Struct(">LLLLLLLLLL")
_FILE_MODE = 0o100644
_WALK_LIMIT = 4096  # entries walked to place a new path before the full parse is cheaper
SPLICE_MAX = 32  # changes spliced in place; more: the whole index is parsed once
_LARGE = 1 << 20  # an index this large is hashed while it is written, and written out


class IndexLocked(Exception):
    """``index.lock`` exists: a git command is writing the index."""


Unsupported = splitindex.Unsupported  # the index uses a feature this editor does not handle
own_entries = indexbases.own_entries  # what a split index on a lost base names itself


def entry_bytes(path: bytes, stat: os.stat_result | None, blob_sha_hex: str) -> bytes:
    """One index entry (stage 0, regular file 0644) for ``path`` with ``stat``; None:
    no stat data, so git compares the file's content before trusting the entry."""
    mask = 0xFFFFFFFF
    head = (
        _STAT.pack(0, 0, 0, 0, 0, 0, _FILE_MODE, 0, 0, 0)
        if stat is None
        else _STAT.pack(
            int(stat.st_ctime) & mask,
            stat.st_ctime_ns % 1_000_000_000,
            int(stat.st_mtime) & mask,
            stat.st_mtime_ns % 1_000_000_000,
            stat.st_dev & mask,
            stat.st_ino & mask,
            _FILE_MODE,
            stat.st_uid & mask,
            stat.st_gid & mask,
            stat.st_size & mask,
        )
    )
    flags = _FLAGS.pack(min(len(path), 0xFFF))
    raw = head + bytes.fromhex(blob_sha_hex) + flags + path
    return raw + b"\0" * (8 - len(raw) % 8)


def _parse(
    data: bytes, links: list[bytes] | None = None
) -> tuple[int, list[bytes], list[tuple[int, int]]]:
    """(version, names, (start, end) of each entry); a split index's ``link`` extension's
    payload appended to ``links`` (without: Unsupported)."""
    signature, version, count = _HEADER.unpack_from(data, 0)
    if signature != b"DIRC" or version not in (2, 3):
        raise Unsupported(f"index version {version}")
    names: list[bytes] = []
    spans: list[tuple[int, int]] = []
    offset = 12
    for _ in range(count):  # (extended flags, version 3: the name two bytes on)
        name_at, length, end = entry_span(data, offset)
        names.append(data[name_at : name_at + length])
        spans.append((offset, end))
        offset = end
    body_end = len(data) - 20
    while offset < body_end:  # extensions
        signature = data[offset : offset + 4]
        (size,) = struct.unpack_from(">L", data, offset + 4)
        if signature == b"link" and links is not None:
            links.append(data[offset + 8 : offset + 8 + size])
        elif not signature[:1].isupper():
            raise Unsupported(f"required index extension {signature!r}")
        offset += 8 + size
    return version, names, spans


def _whole(index_path: Path, data: bytes) -> tuple[int, list[tuple[bytes, bytes]]]:
    """(version, every (name, entry) in path order), a split index's merged with its base."""
    version, names, spans = _parse(data, links := list[bytes]())
    entries = [data[start:end] for start, end in spans]
    if not links:
        return version, list(zip(names, entries, strict=True))
    whole = splitindex.merged(
        splitindex.read_split(index_path.parent, version, links[-1], names, entries)
    )
    return version_of(entry for _, entry in whole), whole


def read_entries(index_path: Path) -> dict[str, str]:
    """Path → blob id of every stage-0 entry (empty when there is no index)."""
    try:
        data = index_path.read_bytes()
    except FileNotFoundError:
        return {}
    _, entries = _whole(index_path, data)
    return {name.decode("utf-8", "surrogateescape"): entry[40:60].hex() for name, entry in entries}


def _name_at(data: bytes, start: int) -> bytes:
    (flags,) = _FLAGS.unpack_from(data, start + 60)
    return data[start + 62 : start + 62 + (flags & 0xFFF)]


def _next(data: bytes, start: int) -> int:
    return entry_span(data, start)[2]


def _find_entry(data: bytes, needle: bytes, end: int) -> int | None:
    """Offset of the first entry whose name starts with ``needle`` (exact when it ends in
    NUL). Entry names start 62 bytes into an entry and entries are 8-byte aligned from
    offset 12, so a real match sits at ``pos % 8 == 2`` right after its flags; anything
    else is a coincidence inside binary fields and is skipped."""
    pos = data.find(needle, 12, end)
    while pos != -1:
        start = pos - 62
        if pos % 8 == 2 and start >= 12:
            (flags,) = _FLAGS.unpack_from(data, pos - 2)
            length = flags & 0xFFF
            if (
                length >= len(needle.rstrip(b"\0"))
                and data[pos + length : pos + length + 1] == b"\0"
            ):
                return start
        pos = data.find(needle, pos + 1, end)
    return None


def _insertion_point(data: bytes, path: bytes, end: int) -> int | None:
    """Where a new entry for ``path`` goes, or None when the slow path must decide.

    Entries sharing a directory prefix are contiguous, so the spot is found from the
    first entry of the nearest enclosing directory that has any (a new revision's
    directory climbs to its skill's), walking at most ``_WALK_LIMIT`` entries from there.
    """
    parts = path.split(b"/")[:-1]
    for depth in range(len(parts), 0, -1):
        directory = b"/".join(parts[:depth]) + b"/"
        start = _find_entry(data, directory, end)
        if start is None:
            continue
        for _ in range(_WALK_LIMIT):
            if start >= end:
                return start
            name = _name_at(data, start)
            if not name.startswith(directory) or name > path:
                return start
            start = _next(data, start)
        return None
    return None


def _fast_edits(
    data: bytes, changes: Mapping[bytes, bytes | None]
) -> list[tuple[int, int, bytes, int, bytes]] | None:
    """(start, order, path, end, bytes) splices, or None when the slow path must decide.

    Several new entries at one insertion point must go in path order (git sorts the
    index by path bytes): the path is part of the sort key, before the entry's bytes,
    which start with stat data.
    """
    end = len(data) - 20
    edits = []
    for path, entry in sorted(changes.items()):
        start = _find_entry(data, path + b"\0", end)
        if start is not None:
            edits.append((start, 1, path, _next(data, start), entry or b""))
        elif entry is not None:
            at = _insertion_point(data, path, end)
            if at is None:
                return None
            edits.append((at, 0, path, at, entry))
    return sorted(edits)


def _write(
    index_path: Path, pieces: list[bytes | memoryview], stamp: Path, split: bool = False
) -> None:
    """Write the index whose body is ``pieces`` in order (views into the old file, not
    copies of it: a store's index is megabytes), with its checksum trailer. The stamp of
    a ``split`` one never matches its trailer: it is never spliced."""
    lock = index_path.with_name(index_path.name + ".lock")
    try:
        fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise IndexLocked(str(lock)) from None
    if changed_since_read(index_path):  # a git command wrote it since: read it again
        os.close(fd)
        lock.unlink(missing_ok=True)
        raise IndexChanged
    hashed: list[bytes] = []
    large = sum(len(piece) for piece in pieces) >= _LARGE
    hasher = threading.Thread(target=sha1_into, args=(pieces, hashed), name="xbrain-index-sha")
    try:
        with os.fdopen(fd, "wb") as handle:
            if large:  # hashed on a second thread while this one writes (both let go of
                hasher.start()  # the interpreter: on two cores they overlap)
            try:
                for piece in pieces:
                    handle.write(piece)
                if large:
                    handle.flush()
                    start_writeback(handle.fileno())
            finally:
                if large:
                    hasher.join()
            if not large:
                sha1_into(pieces, hashed)
            if not hashed:  # the hashing thread failed (out of memory)
                raise OSError(f"No checksum was computed for {lock}.")
            trailer = hashed[0]
            handle.write(trailer)
        os.replace(lock, index_path)
    except BaseException:
        lock.unlink(missing_ok=True)
        raise
    fd = os.open(stamp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # private, any umask
    with os.fdopen(fd, "wb") as handle:
        handle.write(trailer + (b"split" if split else b""))


def update(index_path: Path, changes: Mapping[bytes, bytes | None], stamp: Path) -> bool:
    """Replace, add (entry bytes) or remove (None) entries by path; False if unsupported.

    ``stamp`` remembers the checksum of the last index written here: while it matches,
    the file has no extensions and edits are spliced in without walking every entry.
    Raises IndexLocked when a git command holds ``index.lock`` (or keeps rewriting it).
    """
    for _ in range(3):
        try:
            return _update(index_path, changes, stamp)
        except IndexChanged:  # a git command wrote it between the read and the lock
            continue
    raise IndexLocked(str(index_path))


def _update(index_path: Path, changes: Mapping[bytes, bytes | None], stamp: Path) -> bool:
    try:
        data: bytes | None = index_path.read_bytes()
    except FileNotFoundError:
        data = None
    with read_as(None if data is None else data[-20:]):
        empty = _HEADER.pack(b"DIRC", 2, 0) + hashlib.sha1(_HEADER.pack(b"DIRC", 2, 0)).digest()
        return _edit(index_path, changes, stamp, empty if data is None else data)


def _edit(
    index_path: Path, changes: Mapping[bytes, bytes | None], stamp: Path, data: bytes
) -> bool:
    try:
        ours = stamp.read_bytes() == data[-20:]
    except OSError:
        ours = False
    # a splice searches the file once per change; past a few dozen, one parse is cheaper
    # (1,000 new resources into 8,000: 0.9 s of searching); a big index is parsed (split)
    _, version, count = _HEADER.unpack_from(data, 0)
    small = count < splitindex.SPLIT_MIN and version == 2  # (2: no extended flags to skip)
    edits = _fast_edits(data, changes) if ours and small and len(changes) <= SPLICE_MAX else None
    if edits is not None:
        signature, version, count = _HEADER.unpack_from(data, 0)
        view = memoryview(data)
        pieces: list[bytes | memoryview] = []
        cursor = 12
        for start, _, _, end, replacement in edits:
            pieces += [view[cursor:start], replacement]
            count += (1 if replacement else 0) - (1 if end > start else 0)
            cursor = end
        pieces.append(view[cursor:-20])
        _write(index_path, [_HEADER.pack(signature, version, count), *pieces], stamp)
        return True
    try:
        version, names, spans = _parse(data, links := list[bytes]())
        entries = [data[start:end] for start, end in spans]
        if links:
            split = splitindex.read_split(index_path.parent, version, links[-1], names, entries)
    except (Unsupported, struct.error, ValueError):  # (dulwich writes it whole: no base named)
        indexbases.settle(index_path.parent, indexbases.named(index_path))
        return False
    if any(entry[60] & 0x30 for entry in entries):  # git's unresolved merge: left to git
        return True
    if links:
        splitindex.apply(split, changes)
        if splitindex.resplit_due(split):
            split = splitindex.rebase(index_path.parent, split)
        _write_split(index_path, split, stamp)
        return True
    for path, entry in sorted(changes.items()):
        at = bisect.bisect_left(names, path)
        exists = at < len(names) and names[at] == path
        if entry is None:
            if exists:
                del names[at], entries[at]
        elif exists:
            entries[at] = entry
        else:
            names.insert(at, path)
            entries.insert(at, entry)
    if len(entries) >= splitindex.SPLIT_MIN and splitindex.wanted(index_path.parent):
        split = splitindex.write_base(index_path.parent, zip(names, entries, strict=True), None)
        _write_split(index_path, split, stamp)
        return True
    version = version_of(entries)
    _write(index_path, [_HEADER.pack(b"DIRC", version, len(entries)), b"".join(entries)], stamp)
    indexbases.settle(index_path.parent, None)  # not split: no base is named any more
    return True


def _write_split(index_path: Path, split: splitindex.Split, stamp: Path) -> None:
    version, count, pieces = splitindex.split_body(split)
    _write(index_path, [_HEADER.pack(b"DIRC", version, count), *pieces], stamp, split=True)
    indexbases.settle(index_path.parent, split.base.sha)


def write_entries(index_path: Path, entries: list[tuple[bytes, bytes]], stamp: Path) -> None:
    """Write a whole index of ``entries`` ((path, entry bytes), any order; a path's own
    entries keep theirs), without extensions (version 3 when an entry needs it)."""
    body = [entry for _, entry in sorted(entries, key=lambda item: item[0])]
    header = _HEADER.pack(b"DIRC", version_of(body), len(entries))
    _write(index_path, [header, b"".join(body)], stamp)
    indexbases.settle(index_path.parent, None)


def in_order(index_path: Path) -> bool:
    """True when the entries are sorted by path bytes, as git requires (or no index)."""
    with contextlib.suppress(FileNotFoundError):
        entries = _whole(index_path, index_path.read_bytes())[1]
        return all(a[0] < b[0] for a, b in itertools.pairwise(entries))
    return True


def sort_entries(index_path: Path, stamp: Path) -> None:
    """Rewrite the index whole with its entries in path order (``doctor --repair``), its
    optional extensions dropped (git rebuilds them); entries keep their bytes."""
    write_entries(index_path, _whole(index_path, index_path.read_bytes())[1], stamp)
