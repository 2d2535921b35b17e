"""Hypothesis: the SQL ranking equals a direct BM25F computation, pruning and English
stems included."""

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

from xbrain.search import ranking
from xbrain.search.index import SearchIndex, field_texts, required_matches
from xbrain.search.ranking import K1, LENGTH_NORMALIZATION, PRIOR_DOCUMENTS, WEIGHTS
from xbrain.search.tokenize import Tokenizer

# words with other forms of one stem (sort/sorts/sorted/sorting, happy/happiness,
# list/listing), words without, Chinese and a dotted term, which have none
VOCABULARY = [
    "alpha",
    "beta",
    "sort",
    "sorts",
    "sorted",
    "sorting",
    "happy",
    "happiness",
    "list",
    "listing",
    "目录",
    "x.y",
]
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


def english_stem(term: str) -> str:
    """Snowball's English stem of a lowercase word, else the term (computed here with
    PyStemmer directly, not through the product's table)."""
    import Stemmer

    if not (term.isascii() and term.isalpha()):
        return term
    return str(Stemmer.Stemmer("english").stemWord(term))


def reference(
    docs: list[dict[str, Any]],
    terms: list[str],
    tokenizer: Tokenizer,
    cover_by: str,
    blend: float,
) -> list[tuple[str, float, list[int]]]:
    """(id, score, matched positions) of every qualifying document, best first: the exact
    ranking and the stemmed one (each query term standing for every indexed form of its
    stem), blended."""
    counts = [[tokenizer.counts(t) for t in field_texts(d)] for d in docs]
    vocabulary = {term for c in counts for field in c for term in field}
    forms = [
        [term]
        if not blend
        else [term, *(t for t in vocabulary if t != term and english_stem(t) == english_stem(term))]
        for term in terms
    ]
    n = len(docs)
    averages = [sum(sum(c[f].values()) for c in counts) / n or 1.0 for f in range(len(WEIGHTS))]
    average_length = sum(sum(sum(f.values()) for f in c) for c in counts) / n

    def leg(pos: int, fields: list[Any], wanted: list[str]) -> tuple[float, float]:
        """The (pseudo-frequency, document frequency) of the forms ``wanted``."""
        x = sum(
            w * sum(f[form] for form in wanted) / (1 - b + b * sum(f.values()) / avg)
            for w, b, avg, f in zip(WEIGHTS, LENGTH_NORMALIZATION, averages, fields, strict=True)
        )
        df = sum(1 for c in counts if any(form in f for f in c for form in wanted))
        return x, df

    scored = []
    for doc, fields in zip(docs, counts, strict=True):
        length = sum(sum(f.values()) for f in fields)
        legs, matched = [], []
        for stemmed in (False, True):
            score, covered, whole, hits = 0.0, 0.0, 0.0, 0
            for pos, term in enumerate(terms):
                x, df = leg(pos, fields, forms[pos] if stemmed else [term])
                idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
                whole += idf
                if x > 0:
                    hits += 1
                    if stemmed:
                        matched.append(pos)
                    # the chance a document this long holds the term anyway: a share p of
                    # documents (beside PRIOR_DOCUMENTS holding nothing) per average length
                    held = 1 - df / (n + PRIOR_DOCUMENTS)
                    unlikely = held ** (length / average_length) if cover_by == "chance" else 1.0
                    covered += idf * max(unlikely, 1e-12)
                    score += idf * x / (K1 + x)
            if cover_by in ("idf", "chance"):  # each term counts by its idf (discounted)
                score *= (covered / whole) ** ranking.COORDINATION
            else:
                score *= (hits / len(terms)) ** ranking.COORDINATION
            legs.append(score)
        score = (legs[0] + blend * legs[1]) / (1 + blend)
        if len(matched) >= required_matches(len(terms)) and score > 0:
            scored.append((doc["id"], score, matched))
    scored.sort(key=lambda item: (-round(item[1], 9), item[0]))
    return scored


def ranked(
    tokenizer: Tokenizer,
    docs: list[dict[str, Any]],
    terms: list[str],
    limit: int,
    knobs: dict[str, Any],
) -> list[Any]:
    """The hits of a fresh index of ``docs``, with some of the ranking's constants set."""
    shipped = {name: getattr(ranking, name) for name in knobs}
    for name, value in knobs.items():
        setattr(ranking, name, value)
    try:
        with SearchIndex(":memory:", tokenizer) as index:
            index.rebuild(iter(docs), f"c{next(counter)}")
            return index.search(terms, limit)
    finally:
        for name, value in shipped.items():
            setattr(ranking, name, value)


@settings(max_examples=200)
@given(
    documents,
    queries,
    st.integers(1, 20),
    st.sampled_from(["chance", "idf", "count"]),
    st.sampled_from([ranking.STEM_BLEND, 0.0, 0.5]),
    st.sampled_from([ranking.FIRST, 1, 3]),
)
def test_sql_ranking_matches_reference(
    tokenizer: Tokenizer,
    corpus: list[tuple[str, str, str, str]],
    terms: list[str],
    limit: int,
    cover_by: str,
    blend: float,
    first: int,
) -> None:
    """The shipped ranking (coverage by idf discounted by chance, stems blended in) and
    the tuner's alternatives (coverage by idf alone or by count; other blends, none);
    with a first look at one or a few documents, pruning by score (MaxScore) is at work
    in these small stores too, and must not change what ranks."""
    docs = [resource(i, *fields) for i, fields in enumerate(corpus)]
    knobs = {"COVER_BY": cover_by, "STEM_BLEND": blend, "FIRST": first}
    hits = ranked(tokenizer, docs, terms, limit, knobs)
    expected = reference(docs, terms, tokenizer, cover_by, blend)[:limit]
    assert [hit.rid for hit in hits] == [rid for rid, _, _ in expected]
    for hit, (_, score, matched) in zip(hits, expected, strict=True):
        assert hit.score == pytest.approx(score, rel=1e-9)
        assert list(hit.matched) == matched


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


@settings(max_examples=150)
@given(
    st.lists(st.tuples(words, words, words, words), min_size=8, max_size=40),
    st.lists(st.sampled_from(VOCABULARY), min_size=2, max_size=6, unique=True),
    st.integers(1, 4),
    st.sampled_from([1, 2, 6]),
)
def test_pruning_by_score_keeps_every_top_hit(
    tokenizer: Tokenizer,
    corpus: list[tuple[str, str, str, str]],
    terms: list[str],
    limit: int,
    first: int,
) -> None:
    """More documents than results, a first look at very few: MaxScore skips documents
    that cannot reach the results, and never one that can (ties included)."""
    docs = [resource(i, *fields) for i, fields in enumerate(corpus)]
    hits = ranked(tokenizer, docs, terms, limit, {"FIRST": first})
    expected = reference(docs, terms, tokenizer, ranking.COVER_BY, ranking.STEM_BLEND)[:limit]
    assert [(hit.rid, list(hit.matched)) for hit in hits] == [(r, m) for r, _, m in expected]


def test_recall_ranks_by_the_words_as_typed(tokenizer: Tokenizer) -> None:
    """Inside ``words_as_typed`` (recall's legs) a word matches itself only; outside it,
    its other forms too — and the switch ends with the block."""
    docs = [resource(0, "sorting", "", "", "lists"), resource(1, "sorted", "", "", "list")]
    with SearchIndex(":memory:", tokenizer) as index:
        index.rebuild(iter(docs), "forms")
        assert [hit.rid for hit in index.search(["sorted"], 5)] == [docs[1]["id"], docs[0]["id"]]
        with ranking.words_as_typed():
            assert [hit.rid for hit in index.search(["sorted"], 5)] == [docs[1]["id"]]
            assert index.search(["sorts"], 5) == []
        assert len(index.search(["sorts"], 5)) == 2


@settings(max_examples=200)
@given(
    documents,
    queries,
    st.integers(1, 4),
    st.sampled_from(["chance", "idf", "count"]),
    st.sampled_from([ranking.STEM_BLEND, 0.0, 0.5]),
    st.sampled_from([1, 2]),
    st.sampled_from([0, 5_000]),
    st.sampled_from([0, 4]),
)
def test_ranking_by_the_terms_documents_hold_matches_reference(
    tokenizer: Tokenizer,
    corpus: list[tuple[str, str, str, str]],
    terms: list[str],
    limit: int,
    cover_by: str,
    blend: float,
    first: int,
    holders: int,
    summed: int,
) -> None:
    """The second look that first reads which of its terms each document holds (on a big
    store's many postings; here whenever the first look fills the few results asked)
    ranks what ranking them all ranks: with the documents that can reach the first
    look's results ranked by name, or, more of them than ``HOLDERS``, all of them (their
    sums listed, or each one's bound computed in the statement: ``SUMMED``)."""
    docs = [resource(i, *fields) for i, fields in enumerate(corpus)]
    knobs = {
        "COVER_BY": cover_by,
        "STEM_BLEND": blend,
        "FIRST": first,
        "HOLDERS_FROM": -1,
        "HOLDERS": holders,
        "SUMMED": summed,
    }
    hits = ranked(tokenizer, docs, terms, limit, knobs)
    expected = reference(docs, terms, tokenizer, cover_by, blend)[:limit]
    assert [hit.rid for hit in hits] == [rid for rid, _, _ in expected]
    for hit, (_, score, matched) in zip(hits, expected, strict=True):
        assert hit.score == pytest.approx(score, rel=1e-9)
        assert list(hit.matched) == matched
