"""What writing git's index file takes beside its entries: the checksum, the kernel's
write-back, and the check that nobody wrote the index between its read and its lock.

git takes ``index.lock`` before it reads the index it will rewrite; xbrain reads first
(the read is most of the work, and a busy lock should not cost it) and so checks, once
it holds the lock, that the file still ends with the checksum it read: a ``git add``
that landed in between is read again rather than undone (:class:`IndexChanged`).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import threading
from pathlib import Path

__all__ = ["IndexChanged", "changed_since_read", "read_as", "sha1_into", "start_writeback"]

_seen = threading.local()  # the trailer this thread's update read (None: no file)
_UNSET = b"unset"


class IndexChanged(Exception):
    """The index changed between its read and its lock: read it again."""


class read_as:
    """Within the block, this thread's writes of the index check that it still ends with
    ``trailer`` (None: that there still is none)."""

    def __init__(self, trailer: bytes | None) -> None:
        self.trailer = trailer

    def __enter__(self) -> None:
        _seen.trailer = self.trailer

    def __exit__(self, *exc: object) -> None:
        _seen.trailer = _UNSET


def changed_since_read(index_path: Path) -> bool:
    """Whether the index is no longer the one this thread's update read (checked under
    ``index.lock``); False outside an update."""
    expected = getattr(_seen, "trailer", _UNSET)
    if expected == _UNSET:
        return False
    try:
        with open(index_path, "rb") as handle:
            handle.seek(-20, os.SEEK_END)
            now: bytes | None = handle.read(20)
    except FileNotFoundError:
        now = None
    except OSError:  # shorter than a checksum: not what was read either
        return True
    return now != expected


def sha1_into(pieces: list[bytes | memoryview], into: list[bytes]) -> None:
    """Append the SHA-1 of ``pieces`` in order to ``into`` (a thread's result)."""
    checksum = hashlib.sha1()
    for piece in pieces:
        checksum.update(piece)
    into.append(checksum.digest())


def start_writeback(fd: int) -> None:
    """Have the kernel start writing the file's pages out now, while the checksum is
    computed, rather than in the rename (ext4's ``auto_da_alloc``: 7-9 ms of a 17 MB
    index). Nothing is waited for, the order of durability is the rename's own; the pages
    stay cached. Advice only: where it is missing, nothing happens."""
    advise = getattr(os, "posix_fadvise", None)
    if advise is not None:
        with contextlib.suppress(OSError):
            advise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
