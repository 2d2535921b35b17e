"""A long-lived server remembers each query term's forms and frequencies per snapshot of
a kept index (``search/kept.py``'s memo, ``ranking._known``): the same ranking, fewer
statements, and nothing remembered across another connection's commit."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import make
from xbrain.search import kept, ranking

TERMS = ["keyboard", "dialog", "sorted"]


@pytest.fixture
def warm(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """This process keeps its index connections, as ``xbrain serve`` does (undone after)."""
    monkeypatch.setattr(kept, "_KEPT", None)
    kept.keep_warm()
    yield


def _rank(conn: sqlite3.Connection) -> tuple[list[tuple[Any, ...]], list[str]]:
    """The top rows for ``TERMS`` in one read snapshot, and the statements it ran."""
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    conn.execute("BEGIN")
    try:
        total = conn.execute("SELECT COUNT(*) FROM docs").fetchone()[0]
        rows = ranking.scored(conn, TERMS, 10, None, total)
    finally:
        kept.release(conn)
        conn.set_trace_callback(None)
    return rows, statements


def _fresh(path: Path) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, isolation_level=None)
    try:
        return _rank(conn)[0]
    finally:
        conn.close()


def _counts(statements: list[str]) -> int:
    return sum(s.startswith("SELECT COUNT(") and "FROM postings" in s for s in statements)


def test_a_kept_index_ranks_alike_without_counting_postings_again_until_a_commit(
    warm: None, xb: Callable[..., Any], json_file: Callable[[Any], str], store_dir: Path
) -> None:
    """Every served prompt counted the documents holding each of its words (and each of
    their forms) again with SQL over the postings: the same answer on every request until
    the index changes, and the common words recur in every prompt. A kept connection
    remembers them for its snapshot now (``PRAGMA data_version``); a commit of another
    connection (a put's index upkeep) is seen at once."""
    for i, words in enumerate(("keyboard dialog", "keyboard sorted list", "dialog sorting")):
        assert xb("put", json_file(make(f"m{i}", title=words, text=words))).code == 0
    path = store_dir / ".git" / "xbrain" / "search.sqlite"
    conn = kept.reader(path)
    assert conn is not None
    try:
        _ranks_alike_and_sees_commits(conn, path, xb, json_file)
    finally:
        conn.close()


def _ranks_alike_and_sees_commits(
    conn: sqlite3.Connection, path: Path, xb: Callable[..., Any], json_file: Callable[[Any], str]
) -> None:
    first, before = _rank(conn)
    again, after = _rank(conn)
    assert first and again == first == _fresh(path)
    assert _counts(before) > 0 and _counts(after) == 0  # remembered for this snapshot

    extra = make("m9", title="keyboard keyboard dialog", text="sorted dialog keyboard")
    assert xb("put", json_file(extra)).code == 0  # another connection's commit
    assert kept.reader(path) is conn  # the same file, updated in place
    changed, counted = _rank(conn)
    assert _counts(counted) > 0  # the frequencies changed: counted again
    assert changed == _fresh(path) and changed != first
    assert len(changed) == len(first) + 1


def test_a_connection_not_kept_remembers_nothing(
    xb: Callable[..., Any], json_file: Callable[[Any], str], store_dir: Path
) -> None:
    """A fresh command's own connection: each ranking counts afresh (nothing outlives it)."""
    assert xb("put", json_file(make("a", title="keyboard dialog", text="sorted"))).code == 0
    path = store_dir / ".git" / "xbrain" / "search.sqlite"
    conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, isolation_level=None)
    try:
        assert kept.memo(conn) is None
        first, before = _rank(conn)
        again, after = _rank(conn)
    finally:
        conn.close()
    assert first == again and _counts(before) == _counts(after) > 0


def test_a_kept_index_counts_its_documents_once_per_snapshot(
    warm: None,
    xb: Callable[..., Any],
    json_file: Callable[[Any], str],
    store_dir: Path,
    segment_cache: Path,
) -> None:
    """Every served search counted the index's documents (``SELECT COUNT(*) FROM docs``,
    a walk of 100,000 rows on a big store) for the idf of its words: a kept connection
    remembers the count for its snapshot too, and counts again after another
    connection's commit."""
    from xbrain.search.index import SearchIndex
    from xbrain.search.tokenize import Tokenizer

    for i, words in enumerate(("keyboard dialog", "keyboard sorted list", "dialog sorting")):
        assert xb("put", json_file(make(f"m{i}", title=words, text=words))).code == 0
    path = store_dir / ".git" / "xbrain" / "search.sqlite"
    conn = kept.reader(path)
    assert conn is not None
    tokenizer = Tokenizer(segment_cache)

    def search() -> tuple[list[str], int]:
        statements: list[str] = []
        conn.set_trace_callback(statements.append)
        try:
            with SearchIndex(path, tokenizer, prepare=False, kept=conn) as index:
                conn.execute("BEGIN")
                hits = index.search(TERMS, 10)
        finally:
            conn.set_trace_callback(None)
        return [hit.rid for hit in hits], sum("COUNT(*) FROM docs" in s for s in statements)

    try:
        first, counted = search()
        again, recounted = search()
        assert first and again == first and counted == 1 and recounted == 0
        assert xb("put", json_file(make("m9", title="keyboard", text="dialog"))).code == 0
        changed, after_commit = search()
        assert after_commit == 1 and len(changed) == len(first) + 1
    finally:
        tokenizer.close()
        conn.close()
