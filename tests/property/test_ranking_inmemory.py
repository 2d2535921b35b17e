"""Hypothesis: a server that picks the documents to rank from a team layer's postings held
in memory (``search/inmemory.py``) answers exactly as the SQL ranking alone does: the
same rows, ids, scores and matched positions, English with stems and Chinese, with and
without a filter of candidate documents."""

from __future__ import annotations

import contextlib
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.property.test_ranking import VOCABULARY, resource
from xbrain.search import inmemory, kept, ranking
from xbrain.search.index import SearchIndex
from xbrain.search.tokenize import Tokenizer

# beside the shared vocabulary (English forms of one stem, 目录, x.y), more Chinese words
WORDS = [*VOCABULARY, "时间", "排序", "内容", "列出"]
words = st.lists(st.sampled_from(WORDS), max_size=10).map(" ".join)
corpora = st.lists(st.tuples(words, words, words, words), min_size=1, max_size=40)
queries = st.lists(st.sampled_from(WORDS), min_size=1, max_size=6, unique=True)


@pytest.fixture(scope="module")
def tokenizer(segment_cache: Path) -> Iterator[Tokenizer]:
    instance = Tokenizer(segment_cache)
    yield instance
    instance.close()


@contextlib.contextmanager
def served(path: Path) -> Iterator[sqlite3.Connection]:
    """A kept connection to the index at ``path``, as ``xbrain serve`` holds one, with
    every index worth holding in memory (the module's floor is for big teams)."""
    saved = kept._KEPT, kept._HELD, kept._LATER, inmemory.FROM_DOCUMENTS
    kept._KEPT, kept._HELD, kept._LATER, inmemory.FROM_DOCUMENTS = None, {}, {}, 1
    kept.keep_warm()
    try:
        conn = kept.reader(path)
        assert conn is not None
        yield conn
    finally:
        for _, conn, _ in (kept._KEPT or {}).values():
            conn.close()
        kept._KEPT, kept._HELD, kept._LATER, inmemory.FROM_DOCUMENTS = saved


def rank(
    conn: sqlite3.Connection, terms: list[str], limit: int, candidates: list[int] | None
) -> list[tuple[Any, ...]]:
    """``ranking.scored`` in one read transaction of ``conn``."""
    conn.execute("BEGIN")
    try:
        total = ranking.documents(conn)
        return ranking.scored(conn, terms, limit, candidates, total)
    finally:
        kept.release(conn)


def plain_conn(path: Path) -> sqlite3.Connection:
    """A fresh command's connection to the index at ``path``."""
    return sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, isolation_level=None)


def both_ways(
    tokenizer: Tokenizer,
    corpus: list[tuple[str, str, str, str]],
    query: list[str],
    limit: int,
    every: int | None,
) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]], list[str] | None]:
    """The SQL's rows (a fresh connection) and the rows with the postings in memory,
    for ``query`` over ``corpus`` (``every``: a filter of every ``every``-th document);
    and the ids of the documents the memory picked (None: it could not tell)."""
    docs = [resource(i, *fields) for i, fields in enumerate(corpus)]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "search.sqlite"
        with SearchIndex(path, tokenizer) as index:
            index.rebuild(iter(docs), "c")
            candidates = None if every is None else list(range(1, len(docs) + 1, every))
        terms = [term for word in query for term in tokenizer.query_terms(word)]
        terms = list(dict.fromkeys(terms)) or ["alpha"]
        plain = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, isolation_level=None)
        try:
            expected = rank(plain, terms, limit, candidates)
        finally:
            plain.close()
        picked: list[list[int] | None] = []
        pick = inmemory.pick

        def spy(*args: Any) -> list[int] | None:
            found = pick(*args)
            picked.append(found)
            return found

        with served(path) as conn, inmemory.in_memory():
            assert rank(conn, terms, limit, candidates) == expected  # read from SQL, once
            assert kept.idle()  # the server reads the postings while no request waits
            inmemory.pick = spy
            try:
                found = rank(conn, terms, limit, candidates)
            finally:
                inmemory.pick = pick
            # again, each term's share kept from the first: and a term fewer
            assert rank(conn, terms, limit, candidates) == found
            fewer = terms[1:] or terms
            with contextlib.closing(plain_conn(path)) as other:
                assert rank(conn, fewer, limit, None) == rank(other, fewer, limit, None)
            ids = dict(conn.execute("SELECT doc, rid FROM docs").fetchall())
    return expected, found, None if picked[0] is None else [ids[doc] for doc in picked[0]]


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(corpora, queries, st.integers(1, 12), st.sampled_from([None, 1, 2, 3]))
def test_the_documents_picked_in_memory_rank_as_the_sql_alone(
    tokenizer: Tokenizer,
    corpus: list[tuple[str, str, str, str]],
    query: list[str],
    limit: int,
    every: int | None,
) -> None:
    expected, found, picked = both_ways(tokenizer, corpus, query, limit, every)
    assert picked is not None  # the memory answered, and so must be right
    assert found == expected
    assert {row[0] for row in expected} <= set(picked)


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(
    corpora,
    queries,
    st.integers(1, 12),
    st.sampled_from(["chance", "idf", "count"]),
    st.sampled_from([ranking.STEM_BLEND, 0.0, 0.5]),
)
def test_every_way_of_ranking_picks_what_the_sql_ranks(
    tokenizer: Tokenizer,
    corpus: list[tuple[str, str, str, str]],
    query: list[str],
    limit: int,
    cover_by: str,
    blend: float,
) -> None:
    """The tuner's alternatives (coverage by idf or count, other blends) too."""
    shipped = ranking.COVER_BY, ranking.STEM_BLEND
    ranking.COVER_BY, ranking.STEM_BLEND = cover_by, blend
    try:
        expected, found, picked = both_ways(tokenizer, corpus, query, limit, None)
    finally:
        ranking.COVER_BY, ranking.STEM_BLEND = shipped
    assert picked is not None and found == expected


def test_ties_at_the_limit_are_all_handed_to_the_sql(tokenizer: Tokenizer) -> None:
    """Forty documents alike score alike: the SQL breaks the tie by id, so every one of
    them is a candidate, and the first by id win."""
    corpus = [("sort alpha", "", "", "sorting")] * 40 + [("beta", "", "", "")]
    expected, found, picked = both_ways(tokenizer, corpus, ["sorted"], 3, None)
    assert picked is not None and len(picked) == 40
    assert found == expected and [row[0] for row in found] == [
        f"resource_{i:064x}" for i in range(3)
    ]
