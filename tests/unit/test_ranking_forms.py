"""Each form of a query's words is read the cheaper way (issue 45 item 6): a form that few
documents hold is read by its term, a common one looked up per candidate document, in
one statement, for the same hits."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.property.test_ranking import resource
from xbrain.search import ranking, scoring
from xbrain.search.index import SearchIndex
from xbrain.search.tokenize import Tokenizer

PROMPT = ["list", "directory", "contents", "sorted", "by", "time"]


@pytest.fixture(scope="module")
def tokenizer(segment_cache: Path) -> Iterator[Tokenizer]:
    instance = Tokenizer(segment_cache)
    yield instance
    instance.close()


def _resource(i: int, text: str) -> dict[str, Any]:
    return resource(i, " ".join(text.split()[:3]), "", "", text)


def _documents() -> Iterator[dict[str, Any]]:
    """10,000 pages with the words of a prompt in the shares of a 100,000-resource store
    of manual pages, each common word with a few rare forms beside it ("lists",
    "listing", "timed", "timings", "directories"), as in real text."""
    for i in range(10_000):
        words = ["the", "page", f"p{i % 97}"]
        for word, every, at in (
            ("list", 5, 0),
            ("lists", 90, 11),
            ("listing", 300, 17),
            ("listed", 250, 19),
            ("listings", 900, 29),
            ("by", 8, 3),
            ("directory", 31, 1),
            ("directories", 200, 13),
            ("directorys", 800, 33),
            ("contents", 100, 2),
            ("content", 100, 52),
            ("time", 41, 4),
            ("timed", 400, 21),
            ("timings", 700, 23),
            ("timing", 500, 27),
            ("times", 150, 31),
            ("sort", 20, 9),
        ):
            if i % every == at:
                words.append(word)
        if i % 1000 == 7:
            words += ["sorted", "contents", "time", "directory"]
        yield _resource(i, " ".join(words))


def _ranked(index: SearchIndex, seek: int) -> tuple[list[Any], int]:
    """The top rows for PROMPT among 400 candidate documents (as a second look ranks
    them) with ``scoring.SEEK`` at ``seek``, and the SQLite virtual machine's work for
    them (its progress handler's calls: not a time)."""
    shipped = scoring.SEEK
    steps = [0]

    def step() -> int:
        steps[0] += 1
        return 0

    plan = ranking._plan(index.conn, PROMPT, 10_000)
    candidates = list(range(1, 10_001, 25))
    scoring.SEEK = seek
    index.conn.set_progress_handler(step, 100)
    try:
        rows = scoring.query(index.conn, plan, [], len(candidates), candidates, 9)
    finally:
        index.conn.set_progress_handler(None, 0)
        scoring.SEEK = shipped
    return rows, steps[0]


def test_each_form_is_read_by_term_or_per_document_whichever_reads_less(
    tokenizer: Tokenizer,
) -> None:
    """A prompt's words and their forms were all read one way per statement: every form
    looked up for each candidate document, or every form's postings read whole. The rare
    forms of a common word ("lists" beside "list") hold fewer postings than there are
    candidates, the common ones far more: reading each form its own cheaper way does less
    work than either, for the same rows (a served hook on 100,000 resources: the final
    ranking of its ~400 candidates looked 23 forms up for each)."""
    with SearchIndex(":memory:", tokenizer) as index:
        index.rebuild(_documents(), "c1")
        by_document, looked_up = _ranked(index, 0)
        by_term, read_whole = _ranked(index, 10**9)
        rows, work = _ranked(index, scoring.SEEK)
    assert len(rows) >= 4  # enough of them hold 3 of the 6 words
    assert rows == by_document == by_term
    assert work * 5 < min(looked_up, read_whole) * 4, (
        work,
        looked_up,
        read_whole,
    )  # 1,092: 1,655 and 1,460 with SQLite 3.40


def test_the_plan_knows_how_many_documents_hold_each_form(tokenizer: Tokenizer) -> None:
    """What the choice reads: per term, the documents holding each of its forms (the
    term itself first), beside those holding any of them."""
    with SearchIndex(":memory:", tokenizer) as index:
        index.rebuild(_documents(), "c1")
        plan = ranking._plan(index.conn, ["list", "by"], 10_000)
    assert plan.forms[0][0] == "list"
    held = dict(zip(plan.forms[0], plan.form_df[0], strict=True))
    assert held == {"list": 2_000, "lists": 111, "listing": 34, "listed": 40, "listings": 12}
    assert plan.form_df[1] == [1_250] == [plan.stem_df[1]]
    assert plan.exact_df[0] == 2_000 and plan.stem_df[0] == 2_197


def test_the_second_look_does_not_check_its_documents_against_the_first_again(
    tokenizer: Tokenizer,
) -> None:
    """The documents the second look names (``scoring.holders``) hold no word the first
    look read as asked: their ranking tested each posting against those words' documents
    again (a tenth of the final ranking of a served hook on 100,000 resources), for the
    same hits."""
    statements: list[str] = []
    shipped = ranking.FIRST, ranking.HOLDERS_FROM
    with SearchIndex(":memory:", tokenizer) as index:
        index.rebuild(_documents(), "c1")
        ranking.FIRST, ranking.HOLDERS_FROM = 10**9, 10**9  # the first look reads them all
        try:
            every = [(h.rid, h.score, h.matched) for h in index.search(PROMPT, 9)]
            ranking.FIRST, ranking.HOLDERS_FROM = 1, 0  # as on 100,000
            index.conn.set_trace_callback(statements.append)
            hits = [(h.rid, h.score, h.matched) for h in index.search(PROMPT, 9)]
        finally:
            index.conn.set_trace_callback(None)
            ranking.FIRST, ranking.HOLDERS_FROM = shipped
    assert len(hits) == 9 and hits == every
    holders = [s for s in statements if s.startswith("WITH h(term, value)")]
    ranked = [s for s in statements if s.startswith("WITH q(")]
    assert len(holders) == 1 and len(ranked) == 2  # the first look, then the second's
    assert "NOT IN" not in ranked[1]
