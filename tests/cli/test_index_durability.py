"""A write's index upkeep commits without syncing (``sqlitefiles.unsynced_commits``): what
a crash or a power loss can leave of a derived database is an older state or damage,
and either is caught up or rebuilt by the next reader, never trusted as it is."""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.conftest import Result, make
from xbrain.kinds.model import resource_id
from xbrain.sqlitefiles import unsynced_commits

Run = Callable[..., Result]
FIRST = {"title": "Accessible React dialogs", "purpose": "Build accessible dialogs"}
SECOND = {"title": "Quokka habitat survey", "purpose": "Count quokkas on Rottnest"}
SECOND_ID = resource_id("web", "second")


def hits(result: Result) -> list[str]:
    assert result.code == 0, result.stderr
    return [r["resource"]["id"] for r in result.json["results"]]


def test_a_torn_wal_leaves_the_write_before_and_it_is_caught_up(
    xb_proc: Run, json_file: Callable[[Any], str], store_dir: Path, tmp_path: Path
) -> None:
    """A power loss in the middle of an upkeep's WAL frames: SQLite reads the WAL back to
    its last whole transaction, so the index says it reflects the commit before, and the
    next search catches it up to ``main`` instead of answering without the new record."""
    assert xb_proc("put", json_file(make("first", **FIRST))).code == 0
    assert hits(xb_proc("search", "dialogs")) == [resource_id("web", "first")]
    index = store_dir / ".git" / "xbrain" / "search.sqlite"
    wal = Path(f"{index}-wal")
    kept = tmp_path / "kept"
    kept.mkdir()
    # an open connection keeps the WAL from being checkpointed away when the put closes
    with contextlib.closing(sqlite3.connect(index, isolation_level=None)) as holder:
        holder.execute("SELECT COUNT(*) FROM docs").fetchone()
        before = wal.stat().st_size if wal.exists() else 0
        assert xb_proc("put", json_file(make("second", **SECOND))).code == 0
        after = wal.stat().st_size
        assert after > before + 4096  # the upkeep's frames are in the WAL
        shutil.copy(index, kept / "db")
        shutil.copy(wal, kept / "wal")
    # what the disk held: the database file as it was, the WAL cut inside the last write
    shutil.copy(kept / "db", index)
    with open(kept / "wal", "rb") as whole:
        torn = whole.read(before + (after - before) // 2)
    wal.write_bytes(torn)
    Path(f"{index}-shm").unlink(missing_ok=True)
    with contextlib.closing(sqlite3.connect(f"{index.as_uri()}?mode=ro", uri=True)) as conn:
        recorded = conn.execute("SELECT value FROM meta WHERE key = 'commit'").fetchone()[0]
        second = conn.execute("SELECT COUNT(*) FROM docs WHERE rid = ?", (SECOND_ID,))
        assert second.fetchone()[0] == 0  # the torn write is gone as a whole
    assert recorded != xb_proc("status").json["commit"]
    assert hits(xb_proc("search", "quokka")) == [SECOND_ID]
    assert resource_id("web", "first") in hits(xb_proc("search", "dialogs"))


def test_a_damaged_index_after_a_write_is_rebuilt(
    xb_proc: Run, json_file: Callable[[Any], str], store_dir: Path
) -> None:
    """Pages that did not all reach the disk (here: the second half of the file is
    garbage): the next write's upkeep fails quietly (the commit is made), and the next
    search rebuilds the index instead of answering from it."""
    assert xb_proc("put", json_file(make("first", **FIRST))).code == 0
    assert hits(xb_proc("search", "dialogs")) == [resource_id("web", "first")]
    index = store_dir / ".git" / "xbrain" / "search.sqlite"
    data = index.read_bytes()
    index.write_bytes(data[: len(data) // 2] + b"\xa5" * (len(data) - len(data) // 2))
    put = xb_proc("put", json_file(make("second", **SECOND)))
    assert put.code == 0, put.stderr
    assert hits(xb_proc("search", "quokka")) == [SECOND_ID]
    assert resource_id("web", "first") in hits(xb_proc("search", "dialogs"))


def test_unsynced_commits_skip_syncs_only_on_a_fresh_wal(tmp_path: Path) -> None:
    """Inside: no automatic checkpoint (which would write the database file unsynced),
    and no syncs when the WAL holds no frames (nothing old in it can be read back as
    current); a WAL that holds frames keeps NORMAL (its reset syncs the new header).
    After: SQLite's defaults for a derived database, and a failure rolls back."""
    path = tmp_path / "db.sqlite"
    with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as conn:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("CREATE TABLE t (x)")
    with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as conn:
        conn.execute("PRAGMA synchronous=NORMAL")
        with unsynced_commits(conn):  # the last connection dropped the WAL: a fresh one
            assert conn.in_transaction
            assert conn.execute("PRAGMA synchronous").fetchone() == (0,)
            assert conn.execute("PRAGMA wal_autocheckpoint").fetchone() == (0,)
            conn.execute("INSERT INTO t VALUES (1)")
        assert not conn.in_transaction
        assert conn.execute("PRAGMA synchronous").fetchone() == (1,)
        assert conn.execute("PRAGMA wal_autocheckpoint").fetchone() == (1000,)
        with unsynced_commits(conn):  # the frames written above are still in the WAL
            assert conn.execute("PRAGMA synchronous").fetchone() == (1,)
            conn.execute("INSERT INTO t VALUES (2)")
        with contextlib.suppress(RuntimeError), unsynced_commits(conn):
            conn.execute("INSERT INTO t VALUES (3)")
            raise RuntimeError("failed halfway")
        assert not conn.in_transaction
        assert conn.execute("PRAGMA synchronous").fetchone() == (1,)
        assert conn.execute("SELECT x FROM t").fetchall() == [(1,), (2,)]


def test_a_long_wal_is_checkpointed_after_the_unsynced_commits(tmp_path: Path) -> None:
    """Automatic checkpoints are off inside, so the one they would have run is run after
    (under NORMAL): a WAL never grows without bound because every write is an upkeep."""
    path = tmp_path / "db.sqlite"
    wal = Path(f"{path}-wal")
    with (
        contextlib.closing(sqlite3.connect(path, isolation_level=None)) as conn,
        contextlib.closing(sqlite3.connect(path, isolation_level=None)) as reader,
    ):
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("CREATE TABLE t (x)")
        reader.execute("SELECT COUNT(*) FROM t").fetchone()
        with unsynced_commits(conn):
            conn.executemany("INSERT INTO t VALUES (?)", [(b"x" * 4000,) for _ in range(1500)])
        assert wal.stat().st_size > 1000 * 4096  # the reader kept it from being reset
        assert path.stat().st_size > 1500 * 4000  # but its pages are in the database
