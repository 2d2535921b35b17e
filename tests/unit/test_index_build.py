"""The bulk index build gives exactly the index that adding each resource gives, and
tells a progress callback how far it is."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import make
from xbrain.kinds.model import normalize_resource
from xbrain.search.index import SearchIndex
from xbrain.search.tokenize import Tokenizer
from xbrain.store import Store

WORDS = ["keyboard", "focus", "dialog", "目录", "文件", "排序", "sorted", "time", "list", "时间"]
WORDS += ["sorting", "listing", "lists"]  # other forms of a stem


def resource(i: int, words: list[str]) -> dict[str, Any]:
    text = ("" if i % 2 else " ").join(words) or "empty"  # odd: Han runs of several words
    item = make(f"doc-{i}", title=f"{words[0] if words else 'x'} guide {i}", text=text)
    return normalize_resource(item).resource


def tables(conn: sqlite3.Connection) -> dict[str, list[tuple[Any, ...]]]:
    """The index's content, with its internal document numbers replaced by resource ids."""
    docs = conn.execute("SELECT rid, design, resource, l0, l1, l2, l3, l4, l5 FROM docs")
    postings = conn.execute(
        "SELECT term, rid, f0, f1, f2, f3, f4, f5 FROM postings JOIN docs USING (doc)"
    )
    totals = conn.execute("SELECT * FROM totals")
    # the stems of the terms indexed now (a removed term's row may stay: it finds nothing)
    stems = conn.execute("SELECT * FROM stems WHERE term IN (SELECT term FROM postings)")
    return {
        "docs": sorted(docs.fetchall()),
        "postings": sorted(postings.fetchall()),
        "totals": sorted(totals.fetchall()),
        "stems": sorted(stems.fetchall()),
    }


@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from(WORDS), max_size=12), min_size=1, max_size=12),
    st.lists(st.integers(min_value=0, max_value=11), max_size=3),
)
def test_bulk_build_equals_adding_one_by_one(
    segment_cache: Path,
    monkeypatch: pytest.MonkeyPatch,
    texts: list[list[str]],
    repeats: list[int],
) -> None:
    from xbrain.search import tokenize

    monkeypatch.setattr(tokenize, "BULK_SWITCH", 0)  # jieba-rs from the first character
    cache = segment_cache
    docs = [resource(i, words) for i, words in enumerate(texts)]
    docs += [  # an id given twice: the later copy replaces the earlier, in both ways
        {**docs[r % len(docs)], "summary": "a later copy"} for r in repeats
    ]
    tokenizer = Tokenizer(Path(cache))
    try:
        with SearchIndex(":memory:", tokenizer) as bulk, SearchIndex(":memory:", tokenizer) as one:
            # the build segments with jieba-rs (bulk), adding one by one with ours
            assert bulk.rebuild(iter(docs), "c1", bulk=True) == len({d["id"] for d in docs})
            one.reset()
            with one.write():
                for doc in docs:
                    one.add(doc)
            assert tables(bulk.conn) == tables(one.conn)
            # a write's update (a batch's rows at once, jieba-rs here too) gives the same
            with SearchIndex(":memory:", tokenizer) as batched:
                batched.reset()
                with batched.write():
                    batched.update({doc["id"]: doc for doc in docs})
                assert tables(batched.conn) == tables(one.conn)
            for query in (["keyboard", "focus"], ["目录", "排序"], ["time"], ["sort", "lists"]):
                assert bulk.search(query, 20) == one.search(query, 20)
            assert bulk.conn.execute(
                "SELECT name FROM sqlite_master WHERE name = 'postings_doc'"
            ).fetchone()
    finally:
        tokenizer.close()


def test_reindex_and_a_first_search_report_progress(tmp_path: Path, segment_cache: Path) -> None:
    store = Store(tmp_path / "store", cache_dir=segment_cache)
    store.put([make(f"p{i}") for i in range(600)])
    seen: list[tuple[int, int]] = []  # (steps, total), as a progress bar is fed
    assert store.reindex(lambda step, total: seen.append((step, total)))["reindexed"] == 600
    assert sum(step for step, _ in seen) == 600 and {total for _, total in seen} == {600}
    (tmp_path / "store" / ".git" / "xbrain" / "search.sqlite").unlink()
    seen.clear()
    found = store.search("dialog", progress=lambda step, total: seen.append((step, total)))
    assert found["results"] and sum(step for step, _ in seen) == 600
    seen.clear()
    store.search("dialog", progress=lambda step, total: seen.append((step, total)))
    assert seen == []  # a current index is not rebuilt


def test_import_store_leaves_an_index_the_first_search_uses_as_is(
    tmp_path: Path, segment_cache: Path
) -> None:
    import json

    from xbrain.search.query import current

    items = [make(f"i{i}", text=f"keyboard focus dialog {i}") for i in range(300)]
    source = tmp_path / "original.json"
    document = {"version": 1, "resources": items, "tombstones": [], "receipts": {}}
    source.write_text(json.dumps(document))
    store = Store(tmp_path / "store", cache_dir=segment_cache)
    steps: list[tuple[int, int]] = []
    commit = store.import_store(source, lambda step, total: steps.append((step, total)))["commit"]
    assert sum(step for step, _ in steps) == 300 and {total for _, total in steps} == {300}
    control = tmp_path / "store" / ".git"
    tokenizer = Tokenizer(segment_cache)
    try:
        terms = tokenizer.query_terms("keyboard dialog")
        fast = current(control, tokenizer, terms, 5, None, None, None)  # no git, no rebuild
    finally:
        tokenizer.close()
    assert fast is not None and len(fast["results"]) == 5
    assert store.reindex()["commit"] == commit  # the same index, built from the records
    assert store.search("keyboard dialog") == fast


def test_clone_leaves_an_index_the_first_search_uses_as_is(
    tmp_path: Path, segment_cache: Path
) -> None:
    from xbrain.search.query import current
    from xbrain.store import clone

    origin = Store(tmp_path / "origin", cache_dir=segment_cache)
    origin.put([make(f"c{i}", text=f"keyboard focus dialog {i}") for i in range(50)])
    origin.delete(origin.put([make("gone", text="keyboard")])["results"][0]["id"])
    steps: list[tuple[int, int]] = []
    clone(str(tmp_path / "origin"), tmp_path / "copy", lambda s, n: steps.append((s, n)))
    assert sum(step for step, _ in steps) == 50 and {n for _, n in steps} == {50}
    tokenizer = Tokenizer(segment_cache)
    try:
        terms = tokenizer.query_terms("keyboard dialog")
        fast = current(tmp_path / "copy" / ".git", tokenizer, terms, 20, None, None, None)
    finally:
        tokenizer.close()
    assert fast is not None and len(fast["results"]) == 20
    copy = Store(tmp_path / "copy", cache_dir=segment_cache)
    assert copy.reindex()["reindexed"] == 50  # live ones only: the deleted one is not indexed
    assert copy.search("keyboard dialog", limit=20) == fast


def test_a_first_skill_index_build_loads_what_adding_each_skill_gives(
    tmp_path: Path, segment_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A skill index built in one bulk load (reindex, a first recall) holds exactly the
    rows that each save's upkeep adds, also when it segments with jieba-rs."""
    from xbrain.search import skills as indexed
    from xbrain.search import tokenize

    store = Store(tmp_path / "store", cache_dir=segment_cache)
    bodies = [
        "先确认告警级别，再通知值班人员。",
        "Check the alert level first.",
        "回滚 rollback 步骤",
    ]
    for i, body in enumerate(bodies):
        skill = f"---\nname: skill-{i}\ndescription: 第{i}个 runbook {body[:6]}\n---\n{body}\n"
        store.skill_save_files({"SKILL.md": skill.encode()}, publish=True)  # proposed: unindexed
        if i == 0:
            assert store.skill_recall("runbook")["count"] == 1  # builds the index
    path = tmp_path / "store" / ".git" / indexed.SKILL_INDEX
    with sqlite3.connect(path) as conn:
        added = tables(conn)  # skills 1 and 2 were added by their saves' upkeep
    assert len(added["docs"]) == 3
    monkeypatch.setattr(tokenize, "BULK_SWITCH", 0)  # jieba-rs from the first character
    assert store.reindex()["skills"] == 3
    with sqlite3.connect(path) as conn:
        assert tables(conn) == added
    assert store.skill_recall("告警级别")["results"][0]["slug"] == "skill-0"


def test_doctor_repair_reports_an_older_layout_it_could_not_rebuild(
    tmp_path: Path, segment_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rebuild that fails (a full disk, say) during ``doctor --repair`` is a problem in
    the report, not a crash; the store is untouched and the next search still answers."""
    from xbrain.search import service

    store = Store(tmp_path / "store", cache_dir=segment_cache)
    item = resource(0, ["dialog", "focus"])
    store.put([item])
    assert store.search("dialog")["results"]
    index = tmp_path / "store" / ".git" / "xbrain" / "search.sqlite"
    with sqlite3.connect(index) as conn:
        conn.execute("UPDATE meta SET value = 'old' WHERE key = 'version'")
    conn.close()
    head = store.status()["commit"]

    def full_disk(*args: object) -> int:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(service, "reindex", full_disk)
    report = store.doctor(repair=True)
    assert report["ok"] is False and report["repaired"] == []
    [line] = [p for p in report["problems"] if p["code"] == "search_index"]
    assert "layout old" in line["message"] and "No space left" in line["message"]
    monkeypatch.undo()
    assert store.status()["commit"] == head
    found = store.search("dialog")["results"]
    assert len(found) == 1 and item["id"] in json.dumps(found)
