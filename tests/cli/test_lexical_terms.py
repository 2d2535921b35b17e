"""Issue 43 item 4: what the lexical leg matches. Chinese text is indexed with the
dictionary words that straddle jieba's cut too (``周四`` inside ``每周四``, which jieba
cuts ``每周|四``) while a query keeps its precise cut; English stems match in ``recall``
and ``skill recall`` as in ``search``; an index or entry cache of the older format is
rebuilt by the store itself."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

from tests.conftest import EXAMPLES, Result, make
from xbrain.kinds.entry import entry_id

Run = Callable[..., Result]
THURSDAY = "每周四下午发布新版本，发布之前要跑完整测试并通知值班同事。"
NOTE = entry_id("global", "release-day")
ASKED = "周四发布要测试？"  # its terms all in the note only when 周四 is indexed


def _release_note(xb: Run) -> None:
    entry = {
        "kind": "memory",
        "name": "release-day",
        "description": "值班说明",
        "body": THURSDAY,
    }
    assert xb("entry", "put", "-", input=json.dumps(entry, ensure_ascii=False)).code == 0


def _ids(answer: dict[str, object]) -> list[str]:
    return [str(r["id"]) for r in answer["results"]]  # type: ignore[index, union-attr]


def _skill(folder: Path, name: str, description: str, body: str) -> Path:
    folder.mkdir(parents=True)
    text = f"---\nname: {name}\ndescription: {description}\n---\n{body}\n"
    (folder / "SKILL.md").write_text(text, encoding="utf-8")
    return folder


def test_a_chinese_query_word_inside_a_longer_word_is_found(
    xb: Run, xb_proc: Run, tmp_path: Path
) -> None:
    """``周四`` finds a resource, an entry and a skill that say ``每周四`` (search, recall and
    skill recall), through the fast fresh-process paths and click alike."""
    resource = make("thursday", title="发布日", purpose="发布说明", text=THURSDAY)
    put = xb("put", "-", input=json.dumps(resource, ensure_ascii=False))
    assert put.code == 0, put.stderr
    rid = put.json["results"][0]["id"] if "results" in put.json else None
    _release_note(xb)
    skill = _skill(tmp_path / "release-day", "release-day", "值班说明", THURSDAY)
    assert xb("skill", "save", str(skill), "--publish").code == 0
    other = EXAMPLES / "skills" / "deploy-check"
    assert xb("skill", "save", str(other), "--publish").code == 0
    for run in (xb, xb_proc):
        found = run("search", "周四").json["results"]
        assert [r["resource"]["title"] for r in found] == ["发布日"], found
        if rid is not None:
            assert found[0]["citation"]["id"] == rid
        recalled = run("recall", "-", input=ASKED).json
        assert NOTE in _ids(recalled), recalled
        skills = run("skill", "recall", "周四").json["results"]
        assert [s["slug"] for s in skills] == ["release-day"]


def test_the_query_side_keeps_its_precise_cut(xb: Run) -> None:
    """A query of the longer word does not match a record that holds only a word inside
    it: ``每周四`` is cut ``每周|四`` as a query, and ``周四`` alone is not ``每周``."""
    resource = make("thursday", title="会议", purpose="安排", text="周四开会")
    assert xb("put", "-", input=json.dumps(resource, ensure_ascii=False)).code == 0
    assert xb("search", "每周").json["results"] == []


def test_an_index_and_entry_cache_of_the_older_format_are_rebuilt(
    xb: Run, xb_proc: Run, store_dir: Path
) -> None:
    """Indexes written by the previous version (format before the straddling words) are
    rebuilt by the next query, not read as they are."""
    resource = make("thursday", title="发布日", purpose="发布说明", text=THURSDAY)
    assert xb("put", "-", input=json.dumps(resource, ensure_ascii=False)).code == 0
    _release_note(xb)
    assert xb_proc("search", "发布").json["results"]
    assert xb_proc("recall", "-", input="发布").code == 0
    control = store_dir / ".git" / "xbrain"
    for name, table, old in (("search.sqlite", "postings", "3"), ("entries.sqlite", None, "6")):
        with contextlib.closing(sqlite3.connect(control / name, isolation_level=None)) as conn:
            conn.execute("UPDATE meta SET value = ? WHERE key = 'version'", (old,))
            if table is not None:  # what the older tokenization held: no 周四
                conn.execute("DELETE FROM postings WHERE term = '周四'")
    found = xb_proc("search", "周四").json["results"]
    assert [r["resource"]["title"] for r in found] == ["发布日"]
    assert NOTE in _ids(xb_proc("recall", "-", input=ASKED).json)
    for name in ("search.sqlite", "entries.sqlite"):
        with contextlib.closing(sqlite3.connect(control / name)) as conn:
            (version,) = conn.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()
        assert version not in ("3", "6")


def test_recall_matches_other_english_forms_of_an_entry_and_a_skill(
    xb: Run, xb_proc: Run, tmp_path: Path
) -> None:
    """``recall`` finds an entry by other forms of its words (its queries, description and
    body), weaker than the words themselves, and a skill pointer as ``skill recall`` does."""
    entry = {
        "kind": "memory",
        "name": "deploy-notes",
        "description": "Deploying services",
        "body": "We deploy by tagging releases and pushing containers.",
        "queries": ["deploying containers"],
    }
    assert xb("entry", "put", "-", input=json.dumps(entry)).code == 0
    skill = _skill(
        tmp_path / "sort-helper",
        "sort-helper",
        "Sorting large CSV files by several columns",
        "Use sort -k for each column.",
    )
    assert xb("skill", "save", str(skill), "--publish").code == 0
    note = entry_id("global", "deploy-notes")
    for run in (xb, xb_proc):
        said = run("recall", "-", input="how do I deploy the container?").json["results"]
        assert [r["id"] for r in said] == [note], said
        assert said[0]["why"]["matched"] == ["deploying", "containers"]
        exact = run("recall", "-", input="deploying containers").json["results"][0]
        assert exact["id"] == note and exact["score"] > said[0]["score"]
        pointers = run("recall", "-", input="sorted csv column").json["results"]
        assert [r["id"] for r in pointers] == ["skill:sort-helper"], pointers
        level0 = run("skill", "recall", "sorted").json["results"]
        assert [r["slug"] for r in level0] == ["sort-helper"]


def test_a_stop_rule_blocks_on_its_own_words_only(xb: Run, tmp_path: Path) -> None:
    """A stop-rule blocks the agent, so it matches by its queries' words as typed: other
    forms that route a memory do not block."""
    rule = {
        "kind": "stop-rule",
        "name": "no-deploying",
        "description": "Stop",
        "body": "Do not deploy on Fridays.",
        "queries": ["deploying release"],
    }
    assert xb("entry", "put", "-", input=json.dumps(rule)).code == 0
    asked = ["recall", "-", "--only", "stop-rule"]
    assert xb(*asked, input="deploying release").json["results"]
    assert xb(*asked, input="deployed releases").json["results"] == []
