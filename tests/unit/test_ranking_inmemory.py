"""``xbrain serve`` ranks a team layer with its postings in memory (``search/inmemory.py``,
issue 47: through serve a team of 10,000 resources adds ≤ 1.2x): read while no request
waits, used only for the snapshot it was read from, and the SQL's own answer."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import make
from xbrain.search import inmemory, kept, ranking

TERMS = ["keyboard", "dialog", "sorted"]
WORDS = ("keyboard dialog", "keyboard sorted list", "dialog sorting", "list", "sorted")


@pytest.fixture
def warm(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """This process keeps its index connections, as ``xbrain serve`` does, and holds any
    index in memory (the floor is for big teams); undone after."""
    monkeypatch.setattr(kept, "_KEPT", None)
    monkeypatch.setattr(kept, "_LATER", {})
    monkeypatch.setattr(kept, "_HELD", {})
    monkeypatch.setattr(inmemory, "FROM_DOCUMENTS", 1)
    kept.keep_warm()
    yield
    for _, conn, _ in (kept._KEPT or {}).values():
        conn.close()


def _rank(conn: sqlite3.Connection) -> tuple[list[tuple[Any, ...]], list[str]]:
    """The top rows for ``TERMS`` in one read snapshot (as a team layer is read), and
    the statements it ran."""
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    conn.execute("BEGIN")
    try:
        with inmemory.in_memory():
            rows = ranking.scored(conn, TERMS, 2, None, ranking.documents(conn))
    finally:
        kept.release(conn)
        conn.set_trace_callback(None)
    return rows, statements


def _fresh(path: Path) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, isolation_level=None)
    try:
        conn.execute("BEGIN")
        return ranking.scored(conn, TERMS, 2, None, ranking.documents(conn))
    finally:
        conn.close()


def _ranked(statements: list[str]) -> int:
    """How many ranking statements ran (each groups postings per document)."""
    return sum("GROUP BY g.doc" in s for s in statements)


@pytest.fixture
def index(xb: Callable[..., Any], json_file: Callable[[Any], str], store_dir: Path) -> Path:
    for i, words in enumerate(WORDS * 3):
        assert xb("put", json_file(make(f"m{i}", title=words, text=f"{words} {i}"))).code == 0
    return store_dir / ".git" / "xbrain" / "search.sqlite"


def test_a_kept_layer_is_ranked_from_memory_once_read_while_no_request_waits(
    warm: None, index: Path
) -> None:
    conn = kept.reader(index)
    assert conn is not None
    first, before = _rank(conn)  # by the SQL alone; the read is asked for
    assert first == _fresh(index) and _ranked(before) >= 1
    assert kept.held(conn) == {}
    assert kept.idle() and not kept.idle()  # done once
    held = kept.held(conn)
    assert held is not None and isinstance(held["postings"], inmemory.Postings)
    again, after = _rank(conn)
    assert again == first
    # one ranking statement, over the documents named (not the words' postings)
    ranked = [s for s in after if "GROUP BY g.doc" in s]
    assert len(ranked) == 1 and "p.doc IN (" in ranked[0] and "term IN" not in ranked[0]


def test_a_commit_since_the_read_is_never_answered_from_memory(
    warm: None, index: Path, xb: Callable[..., Any], json_file: Callable[[Any], str]
) -> None:
    """A pull (here a put: another connection's commit to the index) changes the index
    in place; the next request ranks it by the SQL and the memory is read again."""
    conn = kept.reader(index)
    assert conn is not None
    first, _ = _rank(conn)
    kept.idle()
    best = make("best", title="keyboard dialog sorted", text="sorted")
    assert xb("put", json_file(best)).code == 0
    assert kept.reader(index) is conn  # the same file, written in place
    changed, statements = _rank(conn)
    assert changed == _fresh(index) and changed != first
    assert _ranked(statements) >= 1 and "postings" not in (kept.held(conn) or {})
    assert kept.idle()
    again, after = _rank(conn)
    assert again == changed and len([s for s in after if "GROUP BY g.doc" in s]) == 1


def test_an_index_too_big_to_hold_is_ranked_by_the_sql_without_reading_it_again(
    warm: None, index: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(inmemory, "MAX_POSTINGS", 3)
    conn = kept.reader(index)
    assert conn is not None
    first, _ = _rank(conn)
    assert kept.idle()
    held = kept.held(conn)
    assert held is not None and held["postings"][1] == "too many postings"
    again, _ = _rank(conn)
    assert again == first == _fresh(index)
    assert not kept.idle()  # not asked again for the same snapshot


def test_only_a_team_layer_of_a_kept_connection_is_held(warm: None, index: Path) -> None:
    """The personal store (outside ``in_memory``) and a fresh command's connection keep
    the SQL alone: nothing is read into memory for them."""
    conn = kept.reader(index)
    assert conn is not None
    conn.execute("BEGIN")
    try:
        personal = ranking.scored(conn, TERMS, 2, None, ranking.documents(conn))
    finally:
        kept.release(conn)
    assert not kept.idle() and kept.held(conn) == {}
    fresh = sqlite3.connect(f"{index.as_uri()}?mode=ro", uri=True, isolation_level=None)
    try:
        fresh.execute("BEGIN")
        with inmemory.in_memory():
            alone = ranking.scored(fresh, TERMS, 2, None, ranking.documents(fresh))
    finally:
        fresh.close()
    assert not kept.idle() and personal == alone == _fresh(index)


def _read(conn: sqlite3.Connection) -> inmemory.Postings:
    conn.execute("BEGIN")
    try:
        found = inmemory.read_postings(conn, (ranking.WEIGHTS, ranking.LENGTH_NORMALIZATION))
    finally:
        kept.release(conn)
    assert isinstance(found, inmemory.Postings)
    return found


def _by_term(postings: inmemory.Postings) -> dict[str, list[tuple[int, float]]]:
    return {
        term: sorted(zip(*(a.tolist() for a in postings.term(term)), strict=True))
        for term in postings.terms
    }


def test_postings_read_as_one_text_per_term_or_a_row_each_are_alike(
    warm: None, index: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    conn = kept.reader(index)
    assert conn is not None
    packed = _read(conn)
    monkeypatch.setattr(inmemory, "_packed", lambda *args: None)
    rows = _read(conn)
    assert packed.docs.tolist() == rows.docs.tolist() and packed.terms == rows.terms
    assert _by_term(packed) == _by_term(rows) and "keyboard" in packed.terms


def test_a_count_too_big_to_pack_is_read_a_row_each(
    warm: None,
    index: Path,
    xb: Callable[..., Any],
    json_file: Callable[[Any], str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A word said 9,000 times in one text (more than its 13 bits hold)."""
    many = make("many", title="keyboard sorted", text="zap " * 9_000)
    assert xb("put", json_file(many)).code == 0
    conn = kept.reader(index)
    assert conn is not None
    read = inmemory._by_rows
    by_rows: list[int] = []

    def counted(*args: Any) -> Any:
        by_rows.append(1)
        return read(*args)

    monkeypatch.setattr(inmemory, "_by_rows", counted)
    first, _ = _rank(conn)
    assert kept.idle() and by_rows == [1]
    again, statements = _rank(conn)
    assert again == first == _fresh(index)
    assert len([s for s in statements if "GROUP BY g.doc" in s]) == 1


def test_a_posting_without_its_document_is_ranked_by_the_sql_alone(warm: None, index: Path) -> None:
    """A damaged index (a posting naming a document it does not hold): the read says so
    and the SQL alone ranks, never a neighbour's score inflated, never the server's end."""
    with sqlite3.connect(index) as conn:
        doc = conn.execute("SELECT MAX(doc) FROM docs").fetchone()[0]
        conn.execute("DELETE FROM docs WHERE doc = ?", (doc,))
    conn = kept.reader(index)
    assert conn is not None
    first, _ = _rank(conn)
    assert kept.idle()
    held = kept.held(conn)
    assert held is not None and held["postings"][1] == "a posting without its document"
    again, statements = _rank(conn)
    assert again == first == _fresh(index) and _ranked(statements) >= 1
