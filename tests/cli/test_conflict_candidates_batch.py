"""What a batch's ``possibleConflicts`` cost at scale (issue 45 item 6): the finder reads
each term's title and purpose postings once for a batch and counts in memory, where one
query for each resource tested every candidate's terms one by one (≈ 600 ms of a
batch's CPU at 100,000 resources). The candidates, and their order, stay those of that
query."""

from __future__ import annotations

import json
import random
import sqlite3
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

import pytest

import xbrain.search.similar as similar
from tests.conftest import Result, make
from xbrain.search.rows import FIELDS
from xbrain.search.similar import SimilarFinder
from xbrain.search.similararrays import ArrayWalk
from xbrain.text import SIMILAR

Run = Callable[..., Result]

_T, _P = FIELDS.index("title"), FIELDS.index("purpose")
WORDS = (
    "staging",
    "database",
    "host",
    "replica",
    "nightly",
    "batch",
    "report",
    "backup",
    "cache",
    "server",
    "build",
)


class QueryFinder(SimilarFinder):
    """The finder as it was: one query for each call, every candidate's terms counted
    by SQLite (the order the finder keeps)."""

    def _walk(
        self,
        conn: sqlite3.Connection,
        terms: list[str],
        titled: list[str],
        need: int,
        passed: Collection[str],
    ) -> list[dict[str, Any]]:
        count = "SELECT COUNT(*) FROM postings WHERE term = ?"
        df = {term: conn.execute(count, (term,)).fetchone()[0] for term in terms}
        rarest = sorted(terms, key=lambda term: (df[term], term))[: len(terms) - need + 1]
        marks, own, first = (", ".join("?" * len(t)) for t in (terms, titled, rarest))
        sql = (
            "SELECT rid, resource FROM (SELECT d.doc, d.rid, d.resource, "
            f"d.l{_T} AS length, (SELECT COUNT(*) FROM postings q WHERE q.doc = d.doc "
            f"AND q.term IN ({marks}) AND (q.f{_T} > 0 OR q.f{_P} > 0)) AS held, "
            f"(SELECT COUNT(*) FROM postings q WHERE q.doc = d.doc AND q.term IN ({own}) "
            f"AND q.f{_T} > 0) AS titled FROM docs d WHERE d.doc IN (SELECT p.doc FROM "
            f"postings p WHERE p.term IN ({first}) AND (p.f{_T} > 0 OR p.f{_P} > 0))) "
            "WHERE held >= ? ORDER BY titled DESC, length, held DESC, doc"
        )
        found = []
        for rid, text in conn.execute(sql, (*terms, *titled, *rarest, need)):
            if rid not in self._hidden and rid not in passed:
                found.append(json.loads(text))
            if len(found) >= self.want:
                break
        return found


def phrase(rng: random.Random, low: int, high: int) -> str:
    return " ".join(rng.sample(WORDS, rng.randint(low, high)))


def put(run: Run, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    result = run("put", "-", input=items)
    assert result.code == 0, result.stderr
    return list(result.json["results"])


def test_the_candidates_and_their_order_are_those_of_the_one_query(
    xb: Run, store_dir: Path
) -> None:
    """Titles and purposes drawn from a few words (every tie of the order: as many of
    the title's words, as long a title, as many words held) and resources superseded:
    the finder lists what the query did, in its order, for many titles, ``want`` 20
    and 3."""
    rng = random.Random(45)
    items = [make(f"r-{i}", title=phrase(rng, 1, 5), purpose=phrase(rng, 0, 4)) for i in range(160)]
    ids = [result["id"] for result in put(xb, items)]
    for old, new in zip(ids[:6], ids[6:12], strict=True):
        assert xb("supersede", old, new).code == 0
    asked = [(phrase(rng, 1, 4), phrase(rng, 0, 4)) for _ in range(60)]
    cache = store_dir / ".git/xbrain/cache"
    for want in (20, 3):
        with SimilarFinder(store_dir, cache, SIMILAR, want) as finder:
            found = [finder.find(title, purpose, set(ids[:3])) for title, purpose in asked]
        with QueryFinder(store_dir, cache, SIMILAR, want) as query:
            expected = [query.find(title, purpose, set(ids[:3])) for title, purpose in asked]
        assert found == expected
        assert sum(len(listed or []) for listed in found) > want * 20  # many listed


def test_a_batch_reads_each_terms_postings_once(
    xb: Run, store_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every resource of a batch shares the words of the others' titles: SQLite's work
    for 50 calls (virtual machine steps) stays near one read of those words' postings,
    where a query for each call tested every candidate's terms (≈ 70× more here)."""
    items = [
        make(f"tool-{i}", title=f"Toolkit {i} options", purpose="Options of the toolkit")
        for i in range(150)
    ]
    put(xb, items)
    steps = [0]
    opened = similar.open_current

    def counted(*args: Any) -> sqlite3.Connection | None:
        conn = opened(*args)
        if conn is not None:
            conn.set_progress_handler(lambda: steps.__setitem__(0, steps[0] + 1) or 0, 1000)
        return conn

    monkeypatch.setattr(similar, "open_current", counted)
    with SimilarFinder(store_dir, store_dir / ".git/xbrain/cache", SIMILAR) as finder:
        for i in range(50):
            found = finder.find(f"Toolkit {i} options", "Options of the toolkit", set())
            assert found is not None and len(found) == 20
    assert 0 < steps[0] < 100, steps[0]  # 16 (thousand VM steps); 1,169 by the query


def test_a_damaged_title_length_never_fails_the_write(xb_proc: Run, store_dir: Path) -> None:
    """A title length that is not a number (the index damaged by hand), compared with
    another's: the finder answers or steps aside (the put then searches), never fails the
    put."""
    stored = put(
        xb_proc,
        [make(f"r-{i}", title="Staging database host", purpose="Staging") for i in range(2)],
    )
    index = store_dir / ".git/xbrain/search.sqlite"
    with sqlite3.connect(index) as conn:
        conn.execute(f"UPDATE docs SET l{_T} = 'long' WHERE rid = ?", (stored[0]["id"],))
    with SimilarFinder(store_dir, store_dir / ".git/xbrain/cache", SIMILAR) as finder:
        found = finder.find("Staging database host", "Staging")  # never raises
    assert found is None or [r["id"] for r in found] == [r["id"] for r in stored]
    written = xb_proc("put", "-", input=[make("new", title="Staging database host")])
    assert written.code == 0, written.stderr
    listed = written.json["results"][0]["possibleConflicts"]
    assert sorted(conflict["id"] for conflict in listed) == sorted(r["id"] for r in stored)


def test_a_first_call_with_too_many_candidates_reads_few_and_keeps_the_same_title_first(
    xb: Run, store_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A single put into a big store whose title's words are in thousands of titles
    (here: any store, with the bound lowered): the finder does not order every
    candidate (0.8 s for one put at 100,000) but still lists the same title first, then
    near matches in storage order, never one written with it, never twice."""
    near = [
        make(f"near-{i}", title=f"Staging database host replica {i}", purpose="Staging host")
        for i in range(30)
    ]
    ids = [r["id"] for r in put(xb, near)]
    (same,) = put(xb, [make("same-last", title="Staging database host", purpose="Ops")])
    monkeypatch.setattr(similar, "LAZY_FROM", 0)
    statements: list[str] = []
    with SimilarFinder(store_dir, store_dir / ".git/xbrain/cache", SIMILAR) as finder:
        assert finder._open() is not None
        assert finder._conn is not None
        finder._conn.set_trace_callback(statements.append)
        found = finder.find("Staging database host", "Staging host", {ids[0]})
    assert found is not None and len(found) == 20
    listed = [r["id"] for r in found]
    assert listed[0] == same["id"] and ids[0] not in listed
    assert len(set(listed)) == 20 and set(listed[1:]) <= set(ids)
    assert not any("SELECT doc, f" in s for s in statements)  # no term's holders read whole


def test_a_batch_s_later_calls_counted_by_numpy_list_what_a_first_call_lists(
    xb: Run, store_dir: Path
) -> None:
    """From a batch's second call the finder counts and orders with numpy (a single put
    never imports it): for many titles, with resources superseded and ids passed, each
    call lists what a first call of its own lists, in its order."""
    rng = random.Random(4545)
    items = [make(f"r-{i}", title=phrase(rng, 1, 5), purpose=phrase(rng, 0, 4)) for i in range(200)]
    ids = [result["id"] for result in put(xb, items)]
    for old, new in zip(ids[:8], ids[8:16], strict=True):
        assert xb("supersede", old, new).code == 0
    asked = [(phrase(rng, 1, 4), phrase(rng, 0, 4), set(rng.sample(ids, 3))) for _ in range(80)]
    cache = store_dir / ".git/xbrain/cache"
    for want in (20, 3):
        alone = []
        for title, purpose, passed in asked:
            with SimilarFinder(store_dir, cache, SIMILAR, want) as first:
                alone.append(first.find(title, purpose, passed))
        with SimilarFinder(store_dir, cache, SIMILAR, want) as finder:
            finder.find("warm up", "", set())
            together = [finder.find(title, purpose, passed) for title, purpose, passed in asked]
            assert isinstance(finder._walker, ArrayWalk)  # the later calls counted in arrays
        assert together == alone
        assert sum(len(listed or []) for listed in together) > want * 30


def test_a_damaged_index_never_fails_a_batch_s_later_calls(xb_proc: Run, store_dir: Path) -> None:
    """A title length that is not a number, and postings whose document row is gone:
    the numpy count steps aside or leaves the lost document out, never fails."""
    stored = put(
        xb_proc,
        [make(f"r-{i}", title="Staging database host", purpose="Staging") for i in range(3)],
    )
    index = store_dir / ".git/xbrain/search.sqlite"
    with sqlite3.connect(index) as conn:
        conn.execute("DELETE FROM docs WHERE rid = ?", (stored[2]["id"],))
    cache = store_dir / ".git/xbrain/cache"
    with SimilarFinder(store_dir, cache, SIMILAR) as finder:
        finder.find("warm up", "", set())
        found = finder.find("Staging database host", "Staging")
        assert isinstance(finder._walker, ArrayWalk)
    assert found is not None
    assert [r["id"] for r in found] == [r["id"] for r in stored[:2]]
    with sqlite3.connect(index) as conn:
        conn.execute(f"UPDATE docs SET l{_T} = 'long' WHERE rid = ?", (stored[0]["id"],))
    with SimilarFinder(store_dir, cache, SIMILAR) as finder:
        finder.find("warm up", "", set())
        again = finder.find("Staging database host", "Staging")  # never raises
    assert again is None or [r["id"] for r in again] == [r["id"] for r in stored[:2]]


@pytest.mark.parametrize("number", [2**40, -5])
def test_document_numbers_no_array_suits_leave_a_batch_on_the_dict_path(
    xb: Run, store_dir: Path, number: int
) -> None:
    """A document renumbered by hand far past any store's (arrays of that size would
    need terabytes: the put failed with MemoryError after its commit) or below zero:
    the later calls answer as a first call does."""
    stored = put(
        xb, [make(f"r-{i}", title="Staging database host", purpose="Staging") for i in range(3)]
    )
    with sqlite3.connect(store_dir / ".git/xbrain/search.sqlite") as conn:
        (doc,) = conn.execute("SELECT doc FROM docs WHERE rid = ?", (stored[2]["id"],)).fetchone()
        conn.execute("UPDATE docs SET doc = ? WHERE doc = ?", (number, doc))
        conn.execute("UPDATE postings SET doc = ? WHERE doc = ?", (number, doc))
    cache = store_dir / ".git/xbrain/cache"
    with SimilarFinder(store_dir, cache, SIMILAR) as first:
        alone = first.find("Staging database host", "Staging")
    with SimilarFinder(store_dir, cache, SIMILAR) as finder:
        found = [finder.find("Staging database host", "Staging") for _ in range(3)]
        assert finder._walker is None and finder._fit_checked
    assert alone is not None and len(alone) == 3
    assert found == [alone] * 3


def test_a_batch_loads_numpy_without_changing_the_environment(tmp_path: Path) -> None:
    """BLAS is held to one thread as numpy loads for a batch's later calls, and the
    environment is as it was afterwards: child processes and later imports never see it."""
    import os
    import subprocess
    import sys

    code = (
        "import os, sys\n"
        "from xbrain.maththreads import ONE_THREAD, numpy_one_thread\n"
        "assert 'numpy' not in sys.modules\n"
        "np = numpy_one_thread()\n"
        "from threadpoolctl import threadpool_info\n"
        "blas = [p['num_threads'] for p in threadpool_info() if p['internal_api'] == 'openblas']\n"
        "print(np.__name__, set(blas) <= {1}, [os.environ.get(name) for name in ONE_THREAD])\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.endswith("_NUM_THREADS")}
    env["MKL_NUM_THREADS"] = "3"  # the user's own stays
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split(maxsplit=2) == ["numpy", "True", "[None, None, '3']\n"], out.stdout
