"""A big store's git index kept split, as git's own ``core.splitIndex`` keeps it.

A 100,000-record store's index is 17 MB: written whole, every write (a single put as
much as a batch) reads, rewrites and hashes all of it. Split, the index names a shared
base (``.git/sharedindex.<sha>``, written once and never changed) and holds only what
changed since: the base's entries it replaces, in base order with their names left out,
the entries it adds, sorted, and a ``link`` extension with the base's id and two EWAH
bitmaps (which base entries are deleted, which replaced). Past a sixteenth of the
base's entries, a new base is written. git ≥ 2.5 reads it (and keeps it split when it
writes the index itself, unless told otherwise).

A split index on a base git wrote (``git update-index --split-index``) is read and
edited the same way: its base is checked whole against the checksum that names it
first; one damaged, missing or in index version 4 is left to the callers' fallback.
Entries may carry git's extended flags (skip-worktree, intent-to-add: index version 3).
``.git/xbrain/index-shared`` names the bases xbrain wrote. A base lands before the index
naming it, and one xbrain wrote is removed once no index xbrain wrote names it any more.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import mmap
import os
import struct
from array import array
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import NamedTuple

from . import ewah
from .indexbases import MARKER, ours, replace_file
from .indexentry import EXTENDED as _EXTENDED
from .indexentry import entry_span, extended

__all__ = [
    "SPLIT_MIN",
    "Base",
    "Split",
    "Unsupported",
    "apply",
    "merged",
    "read_split",
    "rebase",
    "resplit_due",
    "split_body",
    "wanted",
    "write_base",
]

SPLIT_MIN = 16_384  # entries: an index this large is kept split
_RESPLIT = 16  # changes past the base beyond 1/16 of its entries: a new base
_HEADER = struct.Struct(">4sLL")
_FLAGS = struct.Struct(">H")
_OFFSETS = "index-shared-offsets"  # under .git/xbrain: the newest base's entry offsets


class Unsupported(Exception):
    """The index uses a feature xbrain's editor does not handle (here: a split index on a
    damaged or missing base, or a damaged link)."""


def _stripped(entry: bytes) -> bytes:
    """``entry`` without its name (a replacing entry: git takes the base's)."""
    (flags,) = _FLAGS.unpack_from(entry, 60)
    raw = entry[:60] + _FLAGS.pack(flags & 0xF000) + entry[62 : 64 if flags & _EXTENDED else 62]
    return raw + b"\0" * (8 - len(raw) % 8)


def _named(entry: bytes, name: bytes) -> bytes:
    """A stripped ``entry`` with ``name`` again."""
    (flags,) = _FLAGS.unpack_from(entry, 60)
    more = entry[62 : 64 if flags & _EXTENDED else 62]
    raw = entry[:60] + _FLAGS.pack((flags & 0xF000) | min(len(name), 0xFFF)) + more + name
    return raw + b"\0" * (8 - len(raw) % 8)


class Base:
    """A shared index: its entries by position, found by name."""

    def __init__(
        self, sha: bytes, data: bytes | mmap.mmap, offsets: array[int], version: int = 2
    ) -> None:
        self.sha, self.data, self.offsets, self.version = sha, data, offsets, version
        self.count = len(offsets) - 1  # the last offset: where the entries end

    def name(self, i: int) -> bytes:
        """The name of entry ``i``."""
        name_at, length, _ = entry_span(self.data, self.offsets[i])
        return self.data[name_at : name_at + length]

    def entry(self, i: int) -> bytes:
        """The bytes of entry ``i``."""
        return self.data[self.offsets[i] : self.offsets[i + 1]]

    def bisect(self, name: bytes) -> int:
        """Where ``name`` is or would go (bisected by reading names in place)."""
        low, high = 0, self.count
        while low < high:
            mid = (low + high) // 2
            if self.name(mid) < name:
                low = mid + 1
            else:
                high = mid
        return low

    def find(self, name: bytes) -> int | None:
        """The position of ``name``, or None."""
        at = self.bisect(name)
        return at if at < self.count and self.name(at) == name else None


_bases: dict[bytes, Base] = {}  # by id: a base never changes (a server keeps the last)


def _base_path(git_dir: Path, sha: bytes) -> Path:
    return git_dir / f"sharedindex.{sha.hex()}"


def _load(git_dir: Path, sha: bytes) -> Base:
    base = _bases.get(sha)
    if base is not None and _base_path(git_dir, sha).is_file():  # (removed meanwhile?)
        return base
    mine = sha in ours(git_dir)
    try:
        fd = os.open(_base_path(git_dir, sha), os.O_RDONLY | os.O_NOFOLLOW)  # a link: refused
        with os.fdopen(fd, "rb") as handle:  # read where a name is looked up
            data = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        raise Unsupported("its shared index is missing or empty") from None
    signature, version, count = _HEADER.unpack_from(data, 0)
    if signature != b"DIRC" or version not in (2, 3) or data[-20:] != sha:
        raise Unsupported("the shared index is not the one named")
    if not mine and hashlib.sha1(memoryview(data)[:-20]).digest() != sha:
        raise Unsupported("the shared index git wrote is damaged")
    offsets = _kept_offsets(git_dir, sha) if mine else None
    if offsets is None or len(offsets) != count + 1 or offsets[-1] != len(data) - 20:
        offsets, at = array("L", [12]), 12
        for _ in range(count):
            at = entry_span(data, at)[2]
            offsets.append(at)
    if offsets[-1] > len(data) - 20 or not _optional_only(data, offsets[-1]):
        raise Unsupported("the shared index has entries past its end or required extensions")
    base = Base(sha, data, offsets, version)
    _bases.clear()
    _bases[sha] = base
    return base


def _optional_only(data: mmap.mmap, at: int) -> bool:
    """Whether the extensions from ``at`` to the trailer are whole and all optional
    (caches git rebuilds, which a base's reader may skip)."""
    while at < len(data) - 20:
        signature, size = data[at : at + 4], struct.unpack_from(">L", data, at + 4)[0]
        if not signature[:1].isupper():
            return False
        at += 8 + size
    return at == len(data) - 20


def _kept_offsets(git_dir: Path, sha: bytes) -> array[int] | None:
    """The entry offsets written beside base ``sha`` (a 100,000-entry base is not walked
    on every fresh write), or None."""
    try:
        raw = (git_dir / "xbrain" / _OFFSETS).read_bytes()
    except OSError:
        return None
    offsets = array("L")
    if raw[:20] != sha or (len(raw) - 20) % offsets.itemsize:
        return None
    offsets.frombytes(raw[20:])
    return offsets if offsets and offsets[0] == 12 else None


class Split(NamedTuple):
    """A split index read: its base, what replaces or deletes base entries, what it adds."""

    base: Base
    replaced: dict[int, bytes]  # base position -> the entry (its name stripped)
    deleted: set[int]
    added: dict[bytes, bytes]  # name -> entry


def read_split(
    git_dir: Path, version: int, link: bytes, names: list[bytes], entries: list[bytes]
) -> Split:
    """The split index whose own entries are ``names``/``entries`` and whose ``link``
    extension's payload is ``link``."""
    try:
        return _read_split(git_dir, version, link, names, entries)
    except (struct.error, ValueError) as exc:
        raise Unsupported(f"damaged link extension: {exc}") from None


def _read_split(
    git_dir: Path, version: int, link: bytes, names: list[bytes], entries: list[bytes]
) -> Split:
    if version not in (2, 3):
        raise Unsupported(f"split index version {version}")
    if len(link) < 20:
        raise Unsupported("link extension too short")
    base = _load(git_dir, link[:20])
    deleted: list[int] = []
    replacing: list[int] = []
    if len(link) > 20:
        deleted, at = ewah.bits(link, 20, base.count)
        replacing, at = ewah.bits(link, at, base.count)
        if at != len(link):
            raise Unsupported("garbage after the link extension's bitmaps")
    if len(replacing) > len(names) or (deleted and deleted[-1] >= base.count):
        raise Unsupported("link bitmaps do not fit the base")
    if (replacing and replacing[-1] >= base.count) or set(deleted) & set(replacing):
        raise Unsupported("link bitmaps do not fit the base")
    cut = len(replacing)
    if any(names[:cut]) or not all(names[cut:]):
        raise Unsupported("replacing entries with names, or added ones without")
    replaced = dict(zip(replacing, entries[:cut], strict=True))
    return Split(base, replaced, set(deleted), dict(zip(names[cut:], entries[cut:], strict=True)))


def apply(split: Split, changes: Mapping[bytes, bytes | None]) -> None:
    """Apply ``changes`` (path -> entry, None removes) to ``split`` in place: a path the
    base holds is replaced or deleted there, any other added or dropped."""
    for path, entry in changes.items():
        at = split.base.find(path)
        if at is None:
            if entry is None:
                split.added.pop(path, None)
            else:
                split.added[path] = entry
        else:  # (git may delete a base entry and add one of the same name)
            split.added.pop(path, None)
            if entry is None:
                split.replaced.pop(at, None)
                split.deleted.add(at)
            else:
                split.deleted.discard(at)
                split.replaced[at] = _stripped(entry)


def merged(split: Split) -> list[tuple[bytes, bytes]]:
    """Every entry of the index ``split`` stands for, in path order."""
    base = split.base
    out = []
    for i in range(base.count):
        if i in split.deleted:
            continue
        name = base.name(i)
        kept = split.replaced.get(i)
        out.append((name, base.entry(i) if kept is None else _named(kept, name)))
    if split.added:
        out.extend(split.added.items())
        out.sort(key=lambda item: item[0])
    return out


def wanted(git_dir: Path) -> bool:
    """Whether a whole index of ``SPLIT_MIN`` entries or more may be split from now on:
    unless the repository's ``core.splitIndex`` says false (tools that cannot read a
    ``link`` extension, libgit2's, need a whole index)."""
    from dulwich.config import ConfigFile

    try:
        config = ConfigFile.from_path(str(git_dir / "config"))
        return config.get_boolean((b"core",), b"splitIndex", True)
    except (OSError, ValueError, KeyError):
        return True


def resplit_due(split: Split) -> bool:
    """Whether the changes past the base have grown enough to write a new base."""
    changed = len(split.replaced) + len(split.deleted) + len(split.added)
    return changed * _RESPLIT > split.base.count


def split_body(split: Split) -> tuple[int, int, list[bytes]]:
    """(index version, entry count, pieces) of the index ``split`` after its header:
    replacing entries in base order, added ones sorted, then the ``link`` extension.
    Version 3 when an entry has extended flags (or its base is version 3), else 2."""
    replacing = sorted(split.replaced)
    link = split.base.sha + ewah.encoded(sorted(split.deleted)) + ewah.encoded(replacing)
    entries = [split.replaced[i] for i in replacing]
    entries += [split.added[name] for name in sorted(split.added)]
    version = 3 if split.base.version == 3 or any(map(extended, entries)) else 2
    return version, len(entries), [*entries, b"link", struct.pack(">L", len(link)), link]


def write_base(git_dir: Path, whole: Iterable[tuple[bytes, bytes]], current: bytes | None) -> Split:
    """Write ``whole`` ((name, entry) in path order) as a new shared index; the split index
    over it that changes nothing. ``current``: the base the index on disk names."""
    entries = [entry for _, entry in whole]
    offsets = array("L", itertools.accumulate(map(len, entries), initial=12))
    version = 3 if any(map(extended, entries)) else 2
    header = _HEADER.pack(b"DIRC", version, len(entries))
    return _land(git_dir, [header, *entries], offsets, current, version)


def rebase(git_dir: Path, split: Split) -> Split:
    """The entries ``split`` stands for written as a new base: runs of its base's entries
    copied as they are between the changes (a 100,000-entry base is not walked entry by
    entry), their offsets shifted."""
    base, offsets = split.base, split.base.offsets
    events: list[tuple[int, int, bytes, bytes | None]] = [
        *((at, 1, b"", None) for at in split.deleted),
        *((at, 1, b"", _named(entry, base.name(at))) for at, entry in split.replaced.items()),
        *((base.bisect(name), 0, name, entry) for name, entry in split.added.items()),
    ]  # (base position, 0: added before it / 1: it replaced or deleted, name, entry)
    count = base.count - len(split.deleted) + len(split.added)
    new = [event[3] for event in events if event[3] is not None]
    version = 3 if base.version == 3 or any(map(extended, new)) else 2
    pieces: list[bytes] = [_HEADER.pack(b"DIRC", version, count)]
    starts: list[int] = []
    at, cursor = 12, 0
    for position, order, _, entry in [*sorted(events), (base.count, 0, b"", None)]:
        if position > cursor:  # base entries cursor..position, unchanged
            pieces.append(base.data[offsets[cursor] : offsets[position]])
            shift = at - offsets[cursor]
            starts += [offset + shift for offset in offsets[cursor:position]]
            at, cursor = at + offsets[position] - offsets[cursor], position
        if entry is not None:
            starts.append(at)
            pieces.append(entry)
            at += len(entry)
        if order == 1:
            cursor = position + 1
    starts.append(at)
    return _land(git_dir, pieces, array("L", starts), base.sha, version)


def _land(
    git_dir: Path, pieces: list[bytes], offsets: array[int], current: bytes | None, version: int
) -> Split:
    """Write the base whose header and entries are ``pieces`` and the split index over it
    that changes nothing. The marker names it before it lands (a kill leaves no base
    unnamed, a ``.tmp`` at most, removed the next time), its offsets beside it; then the
    bases xbrain wrote that no index can name any more (all but this one and ``current``,
    the one the index on disk names until the caller's lands: ``indexbases.settle``) are
    removed."""
    body = b"".join(pieces)
    sha = hashlib.sha1(body).digest()
    for leftover in git_dir.glob("sharedindex.*.tmp"):
        leftover.unlink(missing_ok=True)
    previous = ours(git_dir)  # (``current`` may be a base git wrote: never named here)
    kept = [sha] if current in (None, sha) or current not in previous else [sha, current]
    replace_file(git_dir / "xbrain" / MARKER, "".join(f"{item.hex()}\n" for item in kept).encode())
    replace_file(_base_path(git_dir, sha), body + sha)
    replace_file(git_dir / "xbrain" / _OFFSETS, sha + offsets.tobytes())
    for old in previous:
        if old not in kept:
            with contextlib.suppress(OSError):
                _base_path(git_dir, old).unlink()
    _bases.clear()  # the next write maps the file (a server keeps no 20 MB copy of it)
    return Split(Base(sha, body + sha, offsets, version), {}, set(), {})
