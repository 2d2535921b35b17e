"""The SQLite files under ``.git/xbrain`` (a leaf: the standard library only, cheap on
every prompt): derived data (search and skill indexes, the entry cache, the history
table) and the local telemetry. Each is one database file with WAL siblings; what
removes one removes all three."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from json import JSONDecodeError
from pathlib import Path
from typing import Any, TypeVar

__all__ = [
    "DAMAGED",
    "DamagedRow",
    "delete_in",
    "insert_rows",
    "rebuilt_if_damaged",
    "remove_database",
    "unsynced_commits",
]

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
    """One write transaction (``BEGIN IMMEDIATE``; committed when the block ends, rolled
    back when it raises) that does not wait for the disk when the WAL is fresh.

    For an after-commit hook's small write to a derived database in WAL mode
    (``synchronous=NORMAL`` outside). NORMAL syncs no commit; it syncs a WAL's header
    before the first frame written after a reset (an ``fdatasync``, with one of the
    directory for a new file), and each checkpoint. The header sync guards old frames
    left in the file from being read back as current after a power loss; a WAL that is
    empty once the write lock is held (a fresh process's, the last connection having
    dropped it) has none, so the transaction runs under OFF. A process that dies loses
    nothing (SQLite's guarantee for OFF: the data is with the operating system); after a
    power loss the WAL reads back only up to its last whole transaction (each frame's
    checksum chains over the frames before it), so the database is the write before or
    the write itself, never a mix, and the commit its ``meta`` records says which: an
    older one is caught up by the next reader (``search.freshness``). A WAL holding
    frames keeps NORMAL. No checkpoint runs under OFF (automatic ones are off inside;
    the one due after, a WAL past SQLite's 1,000 pages, and the one closing the
    connection run under NORMAL: the WAL synced before it is copied, the database
    before the WAL is dropped)."""
    wal = Path(conn.execute("PRAGMA database_list").fetchone()[2] + "-wal")
    conn.execute("PRAGMA wal_autocheckpoint=0")
    conn.execute("PRAGMA synchronous=OFF")
    try:
        conn.execute("BEGIN IMMEDIATE")
        if _size(wal) != 0:  # frames of another connection: a reset syncs the header
            conn.execute("ROLLBACK")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("BEGIN IMMEDIATE")
        yield
        if conn.in_transaction:
            conn.execute("COMMIT")
    finally:
        if conn.in_transaction:  # left open by a failure: nothing of it is kept
            conn.execute("ROLLBACK")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute(f"PRAGMA wal_autocheckpoint={_CHECKPOINT_PAGES}")
    if _size(wal) > _CHECKPOINT_PAGES * conn.execute("PRAGMA page_size").fetchone()[0]:
        conn.execute("PRAGMA wal_checkpoint(PASSIVE)")


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


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


def insert_rows(
    conn: sqlite3.Connection, head: str, rows: Iterable[Sequence[Any]], tail: str = ""
) -> None:
    """``head`` (``INSERT INTO t``, ``INSERT OR IGNORE INTO t (a, b)``) run on ``rows``
    (all as long as the first) as multi-row ``VALUES`` statements, each under SQLite's
    bound on a statement's parameters, each ended by ``tail`` (an upsert's ``ON
    CONFLICT`` clause).

    Not ``executemany``: it lets go of Python's GIL around every row's step, and while
    another thread of the process runs Python (a write's git-index thread, beside its
    after-commit hooks) each row then waits to take it back, up to the interpreter's
    switch interval. 31,000 postings rows: 62 ms either way alone; beside a thread
    running Python, 0.14 s this way and two minutes through ``executemany``."""
    rows = list(rows)
    if not rows:
        return
    width = len(rows[0])
    if any(not isinstance(row, (tuple, list)) or len(row) != width for row in rows):
        raise ValueError("insert_rows takes rows that are tuples or lists of one length")
    per = max(1, _parameters(conn) // width)
    one = "(" + ", ".join("?" * width) + ")"
    for first in range(0, len(rows), per):
        chunk = rows[first : first + per]
        values = ", ".join([one] * len(chunk))
        conn.execute(f"{head} VALUES {values} {tail}", [v for r in chunk for v in r])


def delete_in(conn: sqlite3.Connection, head: str, values: Iterable[Any]) -> None:
    """``head`` (``DELETE FROM t WHERE c``) for every one of ``values``, as ``IN (…)``
    statements under SQLite's bound (not one statement a value: see ``insert_rows``)."""
    values = list(values)
    per = _parameters(conn)
    for first in range(0, len(values), per):
        chunk = values[first : first + per]
        conn.execute(f"{head} IN ({', '.join('?' * len(chunk))})", chunk)


def _parameters(conn: sqlite3.Connection) -> int:
    """How many parameters a statement may have on ``conn``: SQLite says (Python 3.11
    and later), else 32,766 (SQLite's default since 3.32) when a statement that many
    runs, else 999 (the default before; the least a build may set is lower, and then
    writes fail as they would have anyway)."""
    getlimit = getattr(conn, "getlimit", None)
    if getlimit is not None:
        return int(getlimit(_LIMIT_VARIABLE_NUMBER))
    if not _PROBED:
        try:
            conn.execute(f"SELECT 0 IN ({', '.join('?' * 32766)})", [1] * 32766)
            _PROBED.append(32766)
        except sqlite3.OperationalError:  # too many SQL variables
            _PROBED.append(999)
    return _PROBED[0]


_LIMIT_VARIABLE_NUMBER = 9  # (sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, from Python 3.11)
_PROBED: list[int] = []  # the bound found where Python cannot ask SQLite (3.10)
