"""Rows written by multi-row statements (``sqlitefiles.insert_rows``, ``delete_in``): the
same table as one statement a row, in few statements, whatever SQLite's bound."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import make
from xbrain import sqlitefiles
from xbrain.search.query import INDEX_FILE
from xbrain.sqlitefiles import delete_in, insert_rows
from xbrain.store import Store

_FLOAT = st.floats(allow_nan=False)
_VALUE = st.one_of(
    _FLOAT, st.none(), st.integers(-(2**63), 2**63 - 1), st.text(max_size=8), st.binary(max_size=8)
)


def _table(width: int) -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:", isolation_level=None)
    columns = ", ".join(f"c{i}" for i in range(width))
    conn.execute(f"CREATE TABLE t (n INTEGER PRIMARY KEY, {columns})")
    return conn


@settings(max_examples=60, deadline=None)
@given(
    width=st.integers(1, 5),
    bound=st.integers(1, 40),
    data=st.data(),
)
def test_rows_inserted_and_deleted_are_those_of_one_statement_a_row(
    width: int, bound: int, data: st.DataObject
) -> None:
    bound = max(bound, width + 1)  # (a row wider than the bound fits no statement)
    rows = data.draw(st.lists(st.tuples(*[_VALUE] * width), max_size=60))
    gone = data.draw(st.lists(st.integers(0, 70), max_size=40))
    numbered = [(n, *row) for n, row in enumerate(rows)]
    plain, chunked = _table(width), _table(width)
    marks = ", ".join("?" * (width + 1))
    plain.executemany(f"INSERT INTO t VALUES ({marks})", numbered)
    plain.executemany("DELETE FROM t WHERE n = ?", [(n,) for n in gone])
    statements: list[str] = []
    chunked.set_trace_callback(statements.append)
    with pytest.MonkeyPatch.context() as patch:
        if hasattr(chunked, "setlimit"):  # SQLite itself holds the statements to it
            chunked.setlimit(sqlitefiles._LIMIT_VARIABLE_NUMBER, bound)
        else:  # (Python 3.10)
            patch.setattr(sqlitefiles, "_parameters", lambda conn: bound)
        insert_rows(chunked, "INSERT INTO t", numbered)
        delete_in(chunked, "DELETE FROM t WHERE n", gone)
    ran = len(statements)
    assert (
        chunked.execute("SELECT * FROM t").fetchall() == plain.execute("SELECT * FROM t").fetchall()
    )
    per = max(1, bound // (width + 1))
    assert ran == -(-len(rows) // per) + -(-len(gone) // bound)


def test_the_bound_is_one_sqlite_keeps() -> None:
    conn = sqlite3.connect(":memory:")
    bound = sqlitefiles._parameters(conn)
    assert bound >= 999
    marks = ", ".join("?" * bound)
    assert conn.execute(f"SELECT 7 IN ({marks})", [*range(bound - 1), 7]).fetchone() == (1,)
    if hasattr(conn, "getlimit"):  # SQLite's own; else a statement of it ran (above)
        assert bound == conn.getlimit(sqlitefiles._LIMIT_VARIABLE_NUMBER)
        with pytest.raises(sqlite3.OperationalError):  # one more is refused
            conn.execute(f"SELECT 7 IN ({marks}, ?)", [0] * (bound + 1))


def test_rows_of_other_lengths_or_shapes_are_refused() -> None:
    conn = _table(2)
    for rows in ([(1, 2, 3), (4, 5)], [(1, 2, 3), {"a": 1, "b": 2, "c": 3}]):
        with pytest.raises(ValueError, match="one length"):
            insert_rows(conn, "INSERT INTO t", rows)
    assert conn.execute("SELECT COUNT(*) FROM t").fetchone() == (0,)


def test_an_index_update_runs_a_few_statements_not_one_a_row(
    tmp_path: Path, segment_cache: Path
) -> None:
    """A batch's index update neither runs one statement a posting nor lets go of the
    interpreter's lock for each (which, beside a thread running Python, costs each row up
    to its switch interval)."""
    store = Store(tmp_path / "store", cache_dir=segment_cache)
    store.put(make("first"))
    store.search("first")
    statements: list[str] = []
    real = sqlite3.connect

    def traced(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        conn = real(*args, **kwargs)
        if str(args[0]).endswith(str(INDEX_FILE)):
            conn.set_trace_callback(statements.append)
        return conn

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sqlite3, "connect", traced)
        store.put(
            [
                make(f"more-{i}", title=f"Runbook {i} for the deploy of service {i}")
                for i in range(200)
            ]
        )
    inserts = [s for s in statements if s.startswith("INSERT INTO postings")]
    assert 1 <= len(inserts) <= 5  # thousands of rows: one statement a row before
    assert len(statements) < 200
