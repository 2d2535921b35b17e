"""Facts that change and the review queue (issue 46), through the real CLI: supersede,
validity, ``--as-of``, possible conflicts on write, proposals and their review."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.conftest import Result, head, snapshot_files
from xbrain.kinds.entry import entry_id
from xbrain.schemas import schema_errors

Run = Callable[..., Result]
OLD = entry_id("global", "db port")
NEW = entry_id("global", "db port since the move")
PROMPT = "which port does the database listen on"


def memory(name: str, body: str, **extra: Any) -> dict[str, Any]:
    return {
        "kind": "memory",
        "name": name,
        "description": "the database port",
        "body": body,
        "queries": ["database listen port"],
        **extra,
    }


def recalled(run: Run, *options: str, session: str, **where: Any) -> dict[str, Any]:
    """``xbrain recall`` of PROMPT (lexical); its results by id."""
    result = run(
        "recall", "-", "--mode", "lexical", "--session", session, *options, input=PROMPT, **where
    )
    assert result.code == 0, result.stderr
    assert schema_errors("recall-output", result.json) == []
    return {item["id"]: item for item in result.json["results"]}


def put(
    run: Run, *entries: dict[str, Any], args: tuple[str, ...] = (), **where: Any
) -> dict[str, Any]:
    result = run("entry", "put", "-", *args, input=list(entries), **where)
    assert result.code == 0, result.stderr
    assert schema_errors("entry-put-output", result.json) == []
    return result.json


def test_a_superseded_memory_is_never_recalled_but_is_as_of_a_date_before(
    xb_proc: Run,
) -> None:
    put(xb_proc, memory("db port", "The database listens on 5432."))
    put(xb_proc, memory("db port since the move", "The database listens on 6543."))
    assert {OLD, NEW} <= set(recalled(xb_proc, session="s1"))

    done = xb_proc("entry", "supersede", OLD, NEW)
    assert done.code == 0, done.stderr
    assert done.json["status"] == "superseded"
    assert schema_errors("entry-supersede-output", done.json) == []
    again = xb_proc("entry", "supersede", OLD, NEW)
    assert again.json["status"] == "unchanged" and again.json["commit"] is None

    now = recalled(xb_proc, session="s2")
    assert OLD not in now and NEW in now
    before = recalled(xb_proc, "--as-of", "2000-01-01", session="s3")
    assert OLD in before and NEW not in before  # NEW holds from the supersede on
    marked = recalled(xb_proc, "--include-superseded", session="s4")
    assert marked[OLD]["why"]["supersededBy"] == [NEW]
    assert "supersededBy" not in marked[NEW]["why"]
    kept = xb_proc("entry", "get", OLD)
    assert kept.code == 0 and "supersedes" not in kept.json  # the old entry is untouched
    assert xb_proc("entry", "get", NEW).json["supersedes"] == [OLD]


def test_a_put_with_supersedes_and_validity_answers_by_date(xb_proc: Run) -> None:
    put(xb_proc, memory("db port", "The database listens on 5432."))
    put(
        xb_proc,
        memory(
            "db port since the move",
            "The database listens on 6543.",
            supersedes=[OLD],
            validFrom="2025-06-01",
        ),
    )
    assert xb_proc("entry", "get", NEW).json["validFrom"] == "2025-06-01T00:00:00.000Z"
    assert set(recalled(xb_proc, session="a")) == {NEW}
    assert set(recalled(xb_proc, "--as-of", "2025-05-31T23:59:59Z", session="b")) == {OLD}
    assert set(recalled(xb_proc, "--as-of", "2025-06-01", session="c")) == {NEW}


def test_an_entry_past_its_valid_until_is_not_recalled(xb_proc: Run) -> None:
    put(xb_proc, memory("db port", "5432.", validFrom="2020-01-01", validUntil="2021-01-01"))
    put(xb_proc, memory("db port since the move", "6543.", validFrom="2999-01-01"))
    assert recalled(xb_proc, session="a") == {}
    assert set(recalled(xb_proc, "--as-of", "2020-06-01", session="b")) == {OLD}
    marked = recalled(xb_proc, "--include-superseded", session="c")
    assert marked[OLD]["why"]["expired"] == "2021-01-01T00:00:00.000Z"
    assert marked[NEW]["why"]["validFrom"] == "2999-01-01T00:00:00.000Z"


def test_bad_as_of_is_refused(xb_proc: Run) -> None:
    put(xb_proc, memory("db port", "5432."))
    result = xb_proc("recall", "-", "--as-of", "yesterday", input=PROMPT)
    assert result.code == 4 and result.stdout == ""
    assert len(result.stderr.strip().splitlines()) == 1


def test_a_write_reports_possible_conflicts_and_changes_them_not(xb_proc: Run) -> None:
    first = put(xb_proc, memory("db port", "5432."))
    before = xb_proc("entry", "get", OLD).json
    written = put(xb_proc, memory("db port since the move", "6543."))
    (result,) = written["results"]
    assert [c["id"] for c in result["possibleConflicts"]] == [OLD]
    assert result["possibleConflicts"][0]["name"] == "db port"
    assert xb_proc("entry", "get", OLD).json == before
    assert first["results"][0]["possibleConflicts"] == []
    # another kind, or another scope: no conflict; nor what it supersedes
    other = put(xb_proc, {**memory("db port rule", "5432."), "kind": "rule"})
    assert other["results"][0]["possibleConflicts"] == []
    superseding = put(xb_proc, memory("db port now", "6543.", supersedes=[OLD, NEW]))
    assert superseding["results"][0]["possibleConflicts"] == []


def test_a_proposed_entry_is_invisible_to_recall_until_accepted(xb_proc: Run) -> None:
    # by default an agent's CLI write is in force at once
    put(xb_proc, memory("db port", "5432."), args=("--agent", "claude"))
    assert OLD in recalled(xb_proc, session="a")
    assert xb_proc("config", "review.agentWrites", "proposed").code == 0
    put(xb_proc, memory("db port since the move", "6543."), args=("--agent", "claude"))
    assert xb_proc("entry", "get", NEW).json["status"] == "proposed"
    assert NEW not in recalled(xb_proc, session="b")

    queue = xb_proc("review")
    assert queue.code == 0, queue.stderr
    assert schema_errors("review-output", queue.json) == []
    (item,) = queue.json["proposals"]
    assert item["id"] == NEW and item["proposedBy"] == {"agent": "claude"}
    assert [c["id"] for c in item["possibleConflicts"]] == [OLD]
    listed = xb_proc("entry", "list", "--status", "proposed")
    assert [e["id"] for e in listed.json["entries"]] == [NEW]

    accepted = xb_proc("review", "accept", NEW)
    assert accepted.code == 0, accepted.stderr
    assert schema_errors("review-decision-output", accepted.json) == []
    assert NEW in recalled(xb_proc, session="c")
    assert xb_proc("review").json["count"] == 0
    twice = xb_proc("review", "accept", NEW)  # no longer proposed: refused, nothing changed
    assert twice.code == 4 and twice.stdout == ""


def test_an_agent_proposal_never_hides_an_entry_in_force(xb_proc: Run, store_dir: Path) -> None:
    put(xb_proc, memory("db port", "5432."))
    assert xb_proc("config", "review.agentWrites", "proposed").code == 0
    before = snapshot_files(store_dir)
    result = xb_proc("entry", "put", "-", "--agent", "claude", input=memory("db port", "6543."))
    assert result.code == 5 and result.stdout == ""
    assert snapshot_files(store_dir) == before
    assert OLD in recalled(xb_proc, session="a")


def test_review_reject_leaves_a_tombstone_with_the_reason(xb_proc: Run, store_dir: Path) -> None:
    put(xb_proc, memory("db port", "5432.", status="proposed"))
    assert OLD not in recalled(xb_proc, session="a")
    missing = xb_proc("review", "reject", OLD)  # a reason is required
    assert missing.code == 2
    rejected = xb_proc("review", "reject", OLD, "--reason", "wrong port")
    assert rejected.code == 0, rejected.stderr
    assert rejected.json["rejected"] == [OLD]
    gone = xb_proc("entry", "get", OLD)
    assert gone.code == 3 and "wrong port" in gone.stderr
    stone = next((store_dir / "entry-tombstones").rglob(f"{OLD}.yaml")).read_text()
    assert "reason: wrong port" in stone
    assert xb_proc("doctor").code == 0


def test_review_edit_opens_the_editor_then_accepts(xb_proc: Run, tmp_path: Path) -> None:
    put(xb_proc, memory("db port", "5432.", status="proposed", proposedBy={"agent": "a"}))
    editor = tmp_path / "editor.py"
    editor.write_text(
        "import sys, pathlib\n"
        "p = pathlib.Path(sys.argv[1])\n"
        "p.write_text(p.read_text().replace('5432.', 'It is 5433.'))\n"
    )
    result = xb_proc("review", "edit", OLD, env={"EDITOR": f"{sys.executable} {editor}"})
    assert result.code == 0, result.stderr
    assert result.json["accepted"] == [OLD]
    entry = xb_proc("entry", "get", OLD).json
    assert entry["status"] == "active" and entry["body"] == "It is 5433."
    assert entry["proposedBy"] == {"agent": "a"}
    assert OLD in recalled(xb_proc, session="a")


def test_unused_fields_keep_an_entry_s_bytes(xb_proc: Run, store_dir: Path) -> None:
    """An entry that uses none of the new fields is stored as before (same keys)."""
    put(xb_proc, memory("db port", "5432.", updatedAt="2024-01-01T00:00:00Z"))
    text = next((store_dir / "entries").rglob(f"{OLD}.yaml")).read_text()
    for key in ("supersedes", "validFrom", "validUntil", "proposedBy"):
        assert key not in text
    assert head(store_dir) is not None
    assert json.loads(json.dumps(xb_proc("entry", "get", OLD).json))["status"] == "active"


def test_log_and_show_link_both_ways(xb_proc: Run) -> None:
    put(xb_proc, memory("db port", "5432."))
    put(xb_proc, memory("db port since the move", "6543."))
    before = xb_proc("log", "--limit", "1").json["commits"][0]["commit"]
    assert xb_proc("entry", "supersede", OLD, NEW).code == 0
    old_log, new_log = xb_proc("log", OLD), xb_proc("log", NEW)
    assert schema_errors("log-output", old_log.json) == []
    assert old_log.json["supersededBy"] == [NEW] and "supersedes" not in old_log.json
    assert new_log.json["supersedes"] == [OLD] and "supersededBy" not in new_log.json
    assert new_log.json["commits"][0]["summary"].startswith("entry supersede: supersede")
    shown = xb_proc("show", OLD, "--at", "main")
    assert shown.code == 0, shown.stderr
    assert shown.json["supersededBy"] == [NEW]
    earlier = xb_proc("show", OLD, "--at", before)  # as the store was before the supersede
    assert "supersededBy" not in earlier.json
    assert xb_proc("show", NEW, "--at", "main").json["supersedes"] == [OLD]


def test_a_merge_of_two_devices_keeps_both_links(xb: Run, tmp_path: Path) -> None:
    """Each device supersedes something through the same entry; after they sync, the
    entry supersedes both (and a link made through another entry is kept too)."""
    from tests.cli.test_remotes import bare

    a, b, remote = tmp_path / "a", tmp_path / "b", bare(tmp_path)
    third = entry_id("global", "db port guess")
    put(
        xb,
        memory("db port", "5432."),
        memory("db port guess", "5431."),
        memory("db port since the move", "6543."),
        store=a,
    )
    assert xb("remote", "add", "origin", str(remote), store=a).code == 0
    assert xb("remote", "push", store=a).code == 0
    assert xb("clone", str(remote), str(b), store=None).code == 0
    assert xb("entry", "supersede", OLD, NEW, store=a).code == 0
    assert xb("entry", "supersede", third, NEW, store=b).code == 0
    assert xb("remote", "push", store=a).code == 0
    pulled = xb("remote", "pull", store=b)
    assert pulled.code == 0 and pulled.json["state"] == "merged", pulled.stderr
    assert xb("remote", "push", store=b).code == 0
    assert xb("remote", "pull", store=a).code == 0
    for store in (a, b):
        entry = xb("entry", "get", NEW, store=store).json
        assert sorted(entry["supersedes"]) == sorted([OLD, third])
        assert xb("log", OLD, store=store).json["supersededBy"] == [NEW]
        assert xb("doctor", store=store).code == 0
    assert set(recalled(xb, session="m", store=a)) == {NEW}


def _stop_hook(store: Path, tmp_path: Path, session: str, *user: str) -> tuple[int, str]:
    """``xbrain hook claude-code`` for a Stop after a session where the user said ``user``."""
    import os
    import subprocess

    transcript = tmp_path / f"{session}.jsonl"
    lines = [{"type": "user", "message": {"role": "user", "content": text}} for text in user]
    lines.append({"type": "assistant", "message": {"role": "assistant", "content": "Done."}})
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines))
    payload = {
        "hook_event_name": "Stop",
        "session_id": session,
        "transcript_path": str(transcript),
    }
    proc = subprocess.run(
        [sys.executable, "-m", "xbrain", "hook", "claude-code"],
        input=json.dumps(payload).encode(),
        capture_output=True,
        env={**os.environ, "XBRAIN_STORE": str(store), "XBRAIN_CACHE_DIR": str(tmp_path / "c")},
        timeout=60,
    )
    return proc.returncode, proc.stdout.decode()


def test_the_stop_hook_asks_for_session_learnings_once_when_on(
    xb_proc: Run, store_dir: Path, tmp_path: Path
) -> None:
    put(xb_proc, memory("db port", "5432."))
    corrected = ("install numpy", "no, use uv instead of pip")
    assert _stop_hook(store_dir, tmp_path, "s1", *corrected) == (0, "")  # off by default
    assert xb_proc("config", "review.sessionLearning", "on").code == 0
    code, out = _stop_hook(store_dir, tmp_path, "s2", *corrected)
    assert code == 0
    answer = json.loads(out)
    assert answer["decision"] == "block"
    assert "session-learning" in answer["reason"] and '"session": "s2"' in answer["reason"]
    assert _stop_hook(store_dir, tmp_path, "s2", *corrected) == (0, "")  # once per session
    assert _stop_hook(store_dir, tmp_path, "s3", "install numpy", "thanks") == (0, "")
    # what the agent is asked to run lands in the review queue, not in recall
    proposal = {
        "kind": "session-learning",
        "name": "use uv",
        "body": "Install Python packages with uv, not pip.",
        "queries": ["install python packages"],
        "status": "proposed",
        "proposedBy": {"agent": "claude-code", "session": "s2"},
    }
    put(xb_proc, proposal)
    (item,) = xb_proc("review").json["proposals"]
    assert item["proposedBy"] == {"agent": "claude-code", "session": "s2"}


def test_export_and_import_keep_the_new_fields(xb: Run, tmp_path: Path) -> None:
    fields = {
        "supersedes": [OLD],
        "validFrom": "2025-01-01T00:00:00.000Z",
        "validUntil": "2026-01-01T00:00:00.000Z",
        "status": "proposed",
        "proposedBy": {"agent": "claude-code", "session": "s1"},
    }
    put(xb, memory("db port", "5432."), memory("db port since the move", "6543.", **fields))
    assert xb("entry", "export", str(tmp_path / "out")).code == 0
    other = tmp_path / "other"
    imported = xb("entry", "import", str(tmp_path / "out"), store=other)
    assert imported.code == 0, imported.stderr
    again = xb("entry", "get", NEW, store=other).json
    assert {key: again[key] for key in fields} == fields


def test_project_links_only_always_on_rules_in_force(xb: Run, tmp_path: Path) -> None:
    """A proposed, superseded or expired always-on rule is not linked into an agent."""
    rule = {"kind": "rule", "body": "Answer in English.", "alwaysOn": True}
    old, new = entry_id("global", "english"), entry_id("global", "english v2")
    put(
        xb,
        {**rule, "name": "english"},
        {**rule, "name": "english v2", "supersedes": [old]},
        {**rule, "name": "proposed rule", "status": "proposed"},
        {**rule, "name": "expired rule", "validUntil": "2001-01-01"},
    )
    assert xb("entry", "get", new).json["supersedes"] == [old]
    result = xb("project", "--target", str(tmp_path / "agent"), "--dry-run")
    assert result.code == 0, result.stderr
    assert [Path(a["path"]).name for a in result.json["actions"]] == ["english-v2.md"]
