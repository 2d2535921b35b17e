"""The SQLite files under ``.git/xbrain`` (a leaf: the standard library only, cheap on
every prompt): derived data (search and skill indexes, the entry cache, the history
table) and the local telemetry. Each is one database file with WAL siblings; what
removes one removes all three."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable, Iterator
from json import JSONDecodeError
from pathlib import Path
from typing import TypeVar

__all__ = ["DAMAGED", "DamagedRow", "rebuilt_if_damaged", "remove_database", "unsynced_commits"]

_T = TypeVar("_T")


class DamagedRow(ValueError):
    """A row of a derived database that is not what xbrain writes there."""


# what reading a damaged derived database raises: SQLite's errors, or rows that are not
# what xbrain writes (a hand edit, bit rot): either way it is rebuilt or passed over.
# (Not every ValueError: text that is not UTF-8 is the caller's error, said as such.)
DAMAGED = (sqlite3.Error, JSONDecodeError, DamagedRow, KeyError, TypeError)


# SQLite's own default: a commit that leaves the WAL this many pages long checkpoints it
_CHECKPOINT_PAGES = 1000


@contextlib.contextmanager
def unsynced_commits(conn: sqlite3.Connection) -> Iterator[None]:
    """The commits made inside are not synced to the disk; the checkpoint after them is.

    For an after-commit hook's small write to a derived database in WAL mode
    (``synchronous=NORMAL`` outside): inside, ``synchronous=OFF`` leaves out the sync of
    a fresh WAL's header before its first frame (an ``fdatasync``, often with one of
    the directory). A process that dies loses nothing (SQLite's own guarantee for OFF:
    the data is with the operating system). After a power loss the WAL reads back only
    up to its last whole transaction (each frame's checksum chains over every frame
    before it and the header's salt), so the database is the write before or the write
    itself, never a mix, and the commit its ``meta`` records says which: an older one is
    caught up by the next reader (``search.freshness``). What OFF would make unsafe is a
    checkpoint, which writes the database file itself: none runs inside (automatic
    checkpoints off), and the one due after (a WAL past SQLite's own 1,000 pages) and
    the one closing the connection runs under NORMAL, syncing the WAL before it copies
    and the database before the WAL is dropped."""
    conn.execute("PRAGMA wal_autocheckpoint=0")
    conn.execute("PRAGMA synchronous=OFF")
    try:
        yield
    finally:
        if conn.in_transaction:  # left open by a failure: nothing of it is kept
            conn.execute("ROLLBACK")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute(f"PRAGMA wal_autocheckpoint={_CHECKPOINT_PAGES}")
    size = conn.execute("PRAGMA page_size").fetchone()[0]
    wal = Path(conn.execute("PRAGMA database_list").fetchone()[2] + "-wal")
    with contextlib.suppress(OSError):
        if wal.stat().st_size > _CHECKPOINT_PAGES * size:
            conn.execute("PRAGMA wal_checkpoint(PASSIVE)")


def remove_database(path: Path) -> None:
    """Delete the database at ``path`` with its ``-wal`` and ``-shm`` files (and the
    note that it still holds after later commits, ``search.freshness``)."""
    for suffix in ("", "-wal", "-shm", "-same"):
        path.with_name(path.name + suffix).unlink(missing_ok=True)


def rebuilt_if_damaged(path: Path, attempt: Callable[[], _T]) -> _T:
    """``attempt()`` (which opens the derived database at ``path``, building it when it
    is missing); when it meets a row that is not what xbrain writes, the database is
    removed and ``attempt()`` runs once more, on one built anew. SQLite's own errors are
    the caller's: it has handled them already where it opened the file."""
    try:
        return attempt()
    except sqlite3.Error:
        raise
    except DAMAGED:
        remove_database(path)
    return attempt()
