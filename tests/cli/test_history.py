"""log, show, diff and restore through the CLI."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EXAMPLES, Result, head, sample

Run = Callable[..., Result]
ID = "resource_e6030e7a46ceae274d1f608ea3873d83ecbb532113359bbcce333adfce358a56"


def build(xb: Run, json_file: Callable[[Any], str]) -> list[str]:
    """add, edit (as an agent), delete: returns the three commits."""
    commits = []
    commits.append(xb("put", json_file(sample(text="Line one.\nLine two."))).json["commit"])
    edited = sample(
        text="Line one.\nLine two, edited.\nLine three.",
        title="Edited",
        updatedAt="2026-11-01T00:00:00Z",
    )
    commits.append(xb("put", json_file(edited), "--agent", "claude-code").json["commit"])
    commits.append(xb("delete", ID).json["commit"])
    return commits


def test_log_of_store_and_resource(xb: Run, json_file: Callable[[Any], str]) -> None:
    added, edited, deleted = build(xb, json_file)
    entries = xb("log", ID).json["commits"]
    assert [e["commit"] for e in entries] == [deleted, edited, added]
    assert [e["command"] for e in entries] == ["delete", "put", "put"]
    assert entries[1]["agent"] == "claude-code" and entries[0]["agent"] is None
    assert entries[1]["summary"].startswith(f'put: update {ID} "Edited"')
    store_log = xb("log", "--limit", "2").json["commits"]
    assert [e["commit"] for e in store_log] == [deleted, edited]
    assert xb("log", "--limit", "0").code == 4


def test_show_at_revisions(xb: Run, json_file: Callable[[Any], str]) -> None:
    added, edited, _ = build(xb, json_file)
    assert (
        xb("show", ID, "--at", added).json["resource"]["title"]
        == "Fictional accessible dialog guide"
    )
    assert xb("show", ID, "--at", "main~1").json["resource"]["title"] == "Edited"
    assert xb("show", ID, "--at", edited[:8]).json["state"] == "live"
    gone = xb("show", ID, "--at", "main").json
    assert gone["state"] == "deleted" and gone["tombstone"]["id"] == ID
    assert xb("show", ID, "--at", "nonsense").code == 3


def test_diff_fields_and_lines(xb: Run, json_file: Callable[[Any], str]) -> None:
    added, edited, _ = build(xb, json_file)
    result = xb("diff", ID, added, edited).json
    changed = {c["field"]: c for c in result["changes"]}
    assert set(changed) == {"title", "text", "updatedAt"}
    assert changed["title"] == {
        "field": "title",
        "before": "Fictional accessible dialog guide",
        "after": "Edited",
    }
    assert (
        "-Line two." in changed["text"]["lines"]
        and "+Line two, edited." in changed["text"]["lines"]
    )
    last = xb("diff", ID).json  # its last change: the deletion
    assert last["from"]["state"] == "live" and last["to"]["state"] == "deleted"
    since = xb("diff", ID, added).json  # from a revision to now
    assert since["to"]["state"] == "deleted"


def test_diff_of_text_made_to_defeat_difflib_answers_at_once(
    xb: Run, json_file: Callable[[Any], str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two 25,000-line texts of 125 distinct one-character lines: the diff took 445 s
    (the MCP server's ``diff`` tool blocked every other call that long)."""
    import difflib

    old = "\n".join(chr(0x4E00 + i % 125) for i in range(25_000))
    new = "\n".join(chr(0x4E00 + (i * 7 + 3) % 125) for i in range(25_000))
    first = xb("put", json_file(sample(text=old))).json["commit"]
    second = xb("put", json_file(sample(text=new, updatedAt="2026-11-01T00:00:00Z")))
    refused = "difflib was asked to match 25,000 x 25,000 lines"
    monkeypatch.setattr(difflib, "unified_diff", lambda *a, **k: pytest.fail(refused))
    diffed = xb("diff", ID, first, second.json["commit"])
    lines = {c["field"]: c for c in diffed.json["changes"]}["text"]["lines"]
    assert lines[:3] == ["--- before", "+++ after", "@@ -1,25000 +1,25000 @@"]
    assert [line[1:] for line in lines[3:] if line[0] == "+"] == new.splitlines()


def test_restore_writes_a_new_revision(
    xb: Run, json_file: Callable[[Any], str], store_dir: Path
) -> None:
    added, edited, deleted = build(xb, json_file)
    restored = xb("restore", ID, "--at", edited)
    assert restored.code == 0 and restored.json["restored"] is True
    resource = xb("get", ID).json
    assert resource["title"] == "Edited"
    assert resource["updatedAt"] > "2026-11-01T00:00:00.000Z"
    entries = xb("log", ID).json["commits"]
    assert [e["commit"] for e in entries][1:] == [deleted, edited, added]  # history kept
    assert entries[0]["command"] == "restore"
    again = xb("restore", ID, "--at", edited)
    assert again.json["restored"] is False and again.json["commit"] is None
    before = head(store_dir)
    assert xb("restore", ID, "--at", deleted).code == 5  # nothing to restore from a deletion
    assert head(store_dir) == before


def test_log_sees_commits_made_outside_xbrain_and_survives_losing_its_cache(
    xb: Run, json_file: Callable[[Any], str], store_dir: Path
) -> None:
    from xbrain.git import GitStore

    build(xb, json_file)
    assert len(xb("log", ID).json["commits"]) == 3
    with GitStore(store_dir) as git:
        parent = git.head()
        path = f"tombstones/e6/{ID}.yaml"
        git.commit(
            parent, {path: None}, "outside: drop tombstone\n", "someone <s@example.invalid>", 0
        )
    entries = xb("log", ID).json["commits"]
    assert entries[0]["summary"] == "outside: drop tombstone" and entries[0]["command"] is None
    for cache in (store_dir / ".git" / "xbrain").glob("history*.sqlite"):
        cache.unlink()
    assert len(xb("log", ID).json["commits"]) == 4


def test_log_reads_the_journal_instead_of_diffing_xbrain_commits(
    xb: Run, json_file: Callable[[Any], str], store_dir: Path, monkeypatch: Any
) -> None:
    from xbrain.git import GitStore

    commits = build(xb, json_file)
    journal = (store_dir / ".git" / "xbrain" / "history.journal").read_text().splitlines()
    assert [line.split()[0] for line in journal] == commits
    assert all(line.split()[1:] == [ID] for line in journal)
    diffed: list[str] = []
    original = GitStore.changed_files

    def counting(self: GitStore, old: Any, new: Any, prefix: str) -> list[str]:
        diffed.append(str(new))
        return original(self, old, new, prefix)

    monkeypatch.setattr(GitStore, "changed_files", counting)
    assert [e["commit"] for e in xb("log", ID).json["commits"]] == commits[::-1]
    assert set(diffed) <= {xb("log", "--limit", "10").json["commits"][-1]["commit"]}  # only init


def test_restore_puts_right_a_record_a_plain_git_commit_damaged(
    xb: Run, json_file: Callable[[Any], str], store_dir: Path
) -> None:
    """A hand commit that breaks a record's YAML stops every search (exit 7); doctor says
    how to put it back, and restore (which read the damaged copy and failed) does it."""
    from xbrain.git import GitStore

    build(xb, json_file)
    good = xb("log", ID).json["commits"][1]["commit"]  # the edit, before the deletion
    assert xb("restore", ID, "--at", good).code == 0
    with GitStore(store_dir) as git:
        parent = git.head()
        path = f"resources/e6/{ID}.yaml"
        git.commit(parent, {path: b"title: [unclosed\n"}, "hand edit\n", "me <m@x.invalid>", 0)
    searched = xb("search", "edited")
    assert searched.code == 7 and f"{path} is invalid: " in searched.stderr
    assert "run xbrain doctor" in searched.stderr
    problem = next(p for p in xb("doctor").json["problems"] if p["code"] == "invalid_record")
    assert f"xbrain restore {ID} --at REV" in problem["message"] and problem["path"] == path
    before = head(store_dir)
    assert xb("put", json_file(sample(title="Newer", updatedAt="2027-01-01T00:00:00Z"))).code == 7
    assert head(store_dir) == before  # an ordinary put still refuses to guess
    restored = xb("restore", ID, "--at", good)
    assert restored.code == 0 and restored.json["restored"] is True
    assert xb("get", ID).json["title"] == "Edited"
    assert [r["resource"]["id"] for r in xb("search", "edited").json["results"]] == [ID]
    assert [p["code"] for p in xb("doctor").json["problems"]] == []


def test_an_entry_has_the_same_history_commands_as_a_resource(xb: Run) -> None:
    """Entries are committed like resources, but log, show, diff and restore refused an
    entry's id ("Invalid resource ID"): an edited or deleted rule could only come back
    through plain git."""
    from xbrain.schemas import schema_errors

    rule = {"kind": "rule", "name": "lf", "queries": ["line endings"], "body": "Use LF.\n"}
    added = xb("entry", "put", "-", input=rule).json
    rid = added["results"][0]["id"]
    edited = {**rule, "body": "Use LF.\nNever CRLF.\n", "updatedAt": "2027-01-01T00:00:00Z"}
    second = xb("entry", "put", "-", input=edited).json["commit"]
    gone = xb("entry", "delete", rid).json["commit"]
    log = xb("log", rid)
    assert schema_errors("log-output", log.json) == []
    assert [c["commit"] for c in log.json["commits"]] == [gone, second, added["commit"]]
    then = xb("show", rid, "--at", added["commit"]).json
    assert then["state"] == "live" and then["entry"]["body"] == "Use LF.\n"
    assert xb("show", rid, "--at", gone).json["state"] == "deleted"
    changed = xb("diff", rid, added["commit"], second)
    assert schema_errors("diff-output", changed.json) == [], changed.json
    (body,) = [c for c in changed.json["changes"] if c["field"] == "body"]
    assert "+Never CRLF." in body["lines"]
    assert schema_errors("diff-output", xb("diff", rid).json) == []  # the delete
    back = xb("restore", rid, "--at", second)
    assert back.code == 0 and schema_errors("restore-output", back.json) == []
    assert xb("entry", "get", rid).json["body"] == "Use LF.\nNever CRLF.\n"
    assert xb("restore", rid, "--at", second).json["restored"] is False
    wrong = xb("log", "skill_" + "0" * 64)
    assert wrong.code == 4 and "resource_ or entry_" in wrong.stderr


def test_log_times_are_iso_8601_like_every_other_time(xb_proc: Run, store_dir: Path) -> None:
    """log printed seconds since the epoch where everything else prints ISO 8601."""
    import re
    from datetime import datetime

    assert xb_proc("put", str(EXAMPLES / "batch.json")).code == 0
    for commit in xb_proc("log").json["commits"]:
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z", commit["time"]), commit
        moment = datetime.fromisoformat(commit["time"].replace("Z", "+00:00"))
        assert int(moment.timestamp()) == commit["epoch"]
