"""Hypothesis: the SQL ranking equals a direct BM25F computation, pruning included."""

from __future__ import annotations

import itertools
import math
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xbrain.search import index as search_index
from xbrain.search.index import (
    COORDINATION,
    K1,
    LENGTH_NORMALIZATION,
    PRIOR_DOCUMENTS,
    WEIGHTS,
    SearchIndex,
    field_texts,
    required_matches,
)
from xbrain.search.tokenize import Tokenizer

VOCABULARY = ["alpha", "beta", "gamma", "delta", "omega", "zeta", "kappa", "sigma"]
words = st.lists(st.sampled_from(VOCABULARY), max_size=12).map(" ".join)
documents = st.lists(st.tuples(words, words, words, words), min_size=1, max_size=12)
queries = st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=6, unique=True)
counter = itertools.count()


@pytest.fixture(scope="module")
def tokenizer(segment_cache: Path) -> Iterator[Tokenizer]:
    instance = Tokenizer(segment_cache)
    yield instance
    instance.close()


def resource(i: int, title: str, purpose: str, summary: str, text: str) -> dict[str, Any]:
    return {
        "id": f"resource_{i:064x}",
        "source": {"provider": "p", "id": str(i), "url": "https://example.com/"},
        "title": title,
        "text": text,
        "summary": summary,
        "purpose": purpose,
        "useWhen": [],
        "limitations": [],
        "savedReason": None,
        "updatedAt": "2026-01-01T00:00:00.000Z",
    }


def reference(
    docs: list[dict[str, Any]], terms: list[str], tokenizer: Tokenizer, cover_by: str
) -> list[tuple[str, float]]:
    counts = [[tokenizer.counts(t) for t in field_texts(d)] for d in docs]
    n = len(docs)
    averages = [sum(sum(c[f].values()) for c in counts) / n or 1.0 for f in range(len(WEIGHTS))]
    idf = {
        term: math.log(1 + (n - df + 0.5) / (df + 0.5))
        for term in terms
        for df in [sum(1 for c in counts if any(term in f for f in c))]
    }
    frequency = {term: sum(1 for c in counts if any(term in f for f in c)) for term in terms}
    average_length = sum(sum(sum(f.values()) for f in c) for c in counts) / n
    scored = []
    for doc, fields in zip(docs, counts, strict=True):
        score, matched, matched_idf = 0.0, 0, 0.0
        length = sum(sum(f.values()) for f in fields)
        for term in terms:
            x = sum(
                w * f[term] / (1 - b + b * sum(f.values()) / avg)
                for w, b, avg, f in zip(
                    WEIGHTS, LENGTH_NORMALIZATION, averages, fields, strict=True
                )
            )
            if x > 0:
                matched += 1
                # the chance a document this long holds the term anyway: a share p of
                # documents (beside PRIOR_DOCUMENTS holding nothing) per average length
                held = 1 - frequency[term] / (n + PRIOR_DOCUMENTS)
                unlikely = held ** (length / average_length) if cover_by == "chance" else 1.0
                matched_idf += idf[term] * max(unlikely, 1e-12)
                score += idf[term] * x / (K1 + x)
        if cover_by in ("idf", "chance"):  # each term counts by its idf (discounted)
            score *= (matched_idf / sum(idf.values())) ** COORDINATION
        else:
            score *= (matched / len(terms)) ** COORDINATION
        if matched >= required_matches(len(terms)) and score > 0:
            scored.append((doc["id"], score))
    scored.sort(key=lambda item: (-round(item[1], 9), item[0]))
    return scored


@settings(max_examples=80)
@given(documents, queries, st.integers(1, 20), st.sampled_from(["chance", "idf", "count"]))
def test_sql_ranking_matches_reference(
    tokenizer: Tokenizer,
    corpus: list[tuple[str, str, str, str]],
    terms: list[str],
    limit: int,
    cover_by: str,
) -> None:
    """The shipped coverage (by idf, discounted by chance) and the tuner's alternatives
    (by idf alone, by count) alike."""
    docs = [resource(i, *fields) for i, fields in enumerate(corpus)]
    shipped = search_index.COVER_BY
    search_index.COVER_BY = cover_by
    try:
        with SearchIndex(":memory:", tokenizer) as index:
            index.rebuild(iter(docs), f"c{next(counter)}")
            hits = index.search(terms, limit)
    finally:
        search_index.COVER_BY = shipped
    expected = reference(docs, terms, tokenizer, cover_by)[:limit]
    assert [hit.rid for hit in hits] == [rid for rid, _ in expected]
    for hit, (_, score) in zip(hits, expected, strict=True):
        assert hit.score == pytest.approx(score, rel=1e-9)
        assert list(hit.matched) == sorted(hit.matched)


def test_a_term_every_document_holds_still_finds_them(tokenizer: Tokenizer) -> None:
    """Coverage discounts a term by the chance a document holds it; a term held by all of
    them — even by one far longer than the rest, whose chance underflows — still gives
    every document a positive score, the shortest first."""
    docs = [resource(i, "alpha", "", "", "alpha") for i in range(300)]
    docs.append(resource(300, "alpha", "", "", "alpha " + "beta " * 5000))
    with SearchIndex(":memory:", tokenizer) as index:
        index.rebuild(iter(docs), "all")
        hits = index.search(["alpha"], 400)
    assert {hit.rid for hit in hits} == {doc["id"] for doc in docs}
    assert hits[-1].rid == docs[-1]["id"]
    assert all(hit.score > 0 for hit in hits)


def test_sqlite_without_math_functions_ranks_the_same(
    tokenizer: Tokenizer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An SQLite built without ``exp`` gets Python's, and the same ranking."""
    docs = [resource(i, "alpha", "beta", "", "gamma " * (i + 1)) for i in range(5)]
    with SearchIndex(":memory:", tokenizer) as index:
        index.rebuild(iter(docs), "native")
        native = index.search(["alpha", "gamma", "omega"], 10)

    def missing(value: float) -> float:
        raise ValueError("no such function: exp")

    connect = sqlite3.connect

    def without_exp(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        conn: sqlite3.Connection = connect(*args, **kwargs)
        conn.create_function("exp", 1, missing)  # fails as a missing function does
        return conn

    monkeypatch.setattr(sqlite3, "connect", without_exp)
    with SearchIndex(":memory:", tokenizer) as index:
        assert index.conn.execute("SELECT exp(0)").fetchone()[0] == 1.0
        index.rebuild(iter(docs), "fallback")
        fallback = index.search(["alpha", "gamma", "omega"], 10)
    assert native and [(h.rid, h.score) for h in fallback] == [(h.rid, h.score) for h in native]
