"""The layout of one git index entry (versions 2 and 3), shared by the index editor and
the split index's bases: 62 bytes of stat data, object id and flags; with the extended
flag (version 3: skip-worktree, intent-to-add), two more bytes of flags; the name; NULs
to a multiple of 8."""

from __future__ import annotations

import mmap
import struct
from collections.abc import Iterable

__all__ = ["EXTENDED", "entry_span", "extended", "version_of"]

_FLAGS = struct.Struct(">H")
EXTENDED = 0x4000  # an entry's flag: two more bytes of flags follow its own


def entry_span(data: bytes | mmap.mmap, start: int) -> tuple[int, int, int]:
    """(where its name starts, the name's length, where it ends) of the entry at
    ``start``."""
    (flags,) = _FLAGS.unpack_from(data, start + 60)
    name_at = start + (64 if flags & EXTENDED else 62)
    length = flags & 0xFFF
    if length == 0xFFF:  # a longer name: up to its NUL
        end = data.find(b"\0", name_at)
        if end < 0:
            raise ValueError("an index entry's name runs past the end")
        length = end - name_at
    return name_at, length, start + ((name_at - start + length + 8) & ~7)


def extended(entry: bytes) -> bool:
    """Whether ``entry`` carries extended flags (it needs index version 3)."""
    return bool(entry[60] & 0x40)


def version_of(entries: Iterable[bytes]) -> int:
    """The index version ``entries`` need: 3 when one has extended flags, else 2."""
    return 3 if any(map(extended, entries)) else 2
