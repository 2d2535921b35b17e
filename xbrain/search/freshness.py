"""When a derived index answers for ``main``: the freshness rule.

Every derived database under ``.git/xbrain`` records in its ``meta`` table the commit
it reflects. A reader reads the commit ``main`` points at, then answers from the
database only when the database reflects that very commit:

* the commit it records *is* that commit; or
* the note beside it (``<database>-same``, one line ``<recorded> <head>``) names
  exactly that pair: no commit between the two changed anything the database is
  derived from.

Otherwise the reader goes to git (and catches the database up). A note is written only
by a commit's after-commit hook (under the store lock), for a commit that touched
nothing of the database's kind: it extends a note that ends at the commit's parent, or
starts one when the database records the parent. A note states a fact about two
immutable commits, so nothing can make it wrong later: a commit by another process
(with or without xbrain's hooks), a database rebuilt or caught up meanwhile, a note left
behind — a reader uses a note only for the exact pair (the commit its database records,
the commit ``main`` names now). A commit that touches the kind updates the database
itself, which then records that commit. So a resource ``put`` writes one small file for
the skill index and one for the entry cache, not an SQLite transaction in each.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path

from ..errors import XbrainError
from ..inputs import read_file

__all__ = ["carry", "note_path", "recorded_commit", "reflects"]

_NOTE_BOUND = 256  # two commit ids (SHA-256 ones too), a space and a newline


def note_path(database: Path) -> Path:
    """The note beside ``database``."""
    return database.with_name(database.name + "-same")


def _note(database: Path) -> tuple[str, str] | None:
    try:
        data = read_file(note_path(database), _NOTE_BOUND, "", follow=False)
    except XbrainError:
        return None
    parts = data.decode("ascii", "replace").split()
    return (parts[0], parts[1]) if len(parts) == 2 else None


def reflects(database: Path, recorded: str | None, head: str) -> bool:
    """Whether a database at ``database`` that records commit ``recorded`` answers for
    ``head`` (the rule above)."""
    if recorded is None:
        return False
    return recorded == head or _note(database) == (recorded, head)


def recorded_commit(database: Path) -> str | None:
    """The commit a database's ``meta`` records (None: none, or unreadable)."""
    try:
        conn = sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=10)
    except sqlite3.Error:
        return None
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = 'commit'").fetchone()
    except sqlite3.Error:
        return None
    finally:
        conn.close()
    return None if row is None else str(row[0])


def carry(
    database: Path,
    parent: str | None,
    commit: str,
    recorded: Callable[[Path], str | None] = recorded_commit,
) -> None:
    """After ``commit`` (on top of ``parent``) touched nothing ``database`` is derived
    from: note that it reflects ``commit`` when it reflected ``parent``. Call it under
    the store lock; a database that reflected another commit is left for its reader."""
    if parent is None or not database.is_file():
        return
    held = _note(database)
    if held is not None and held[1] == parent:
        start = held[0]
    elif recorded(database) == parent:
        start = parent
    else:
        return
    note = note_path(database)
    temp = note.with_name(note.name + ".tmp")
    with contextlib.suppress(FileNotFoundError):
        temp.unlink()  # never written through a link planted there
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(f"{start} {commit}\n".encode("ascii"))
    os.replace(temp, note)
