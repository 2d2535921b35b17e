"""The SQLite files under ``.git/xbrain`` (a leaf: the standard library only, cheap on
every prompt): derived data (search and skill indexes, the entry cache, the history
table) and the local telemetry. Each is one database file with WAL siblings; what
removes one removes all three."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from json import JSONDecodeError
from pathlib import Path
from typing import TypeVar

__all__ = ["DAMAGED", "DamagedRow", "rebuilt_if_damaged", "remove_database"]

_T = TypeVar("_T")


class DamagedRow(ValueError):
    """A row of a derived database that is not what xbrain writes there."""


# what reading a damaged derived database raises: SQLite's errors, or rows that are not
# what xbrain writes (a hand edit, bit rot): either way it is rebuilt or passed over.
# (Not every ValueError: text that is not UTF-8 is the caller's error, said as such.)
DAMAGED = (sqlite3.Error, JSONDecodeError, DamagedRow, KeyError, TypeError)


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
