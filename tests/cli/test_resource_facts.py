"""Facts that change and the review queue for resources (issue 46), through the real
CLI: supersede and validity kept beside the resource (its bytes, id and digest never
change), search and recall leaving out what is not in force, possible conflicts on
put, proposals and their review, links both ways in log and show, and two devices'
links kept by a merge."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.conftest import Result, make, snapshot_files
from xbrain.codec import digest
from xbrain.schemas import schema_errors

Run = Callable[..., Result]
QUERY = "staging database host"


def resource(source_id: str, title: str, text: str, **extra: Any) -> dict[str, Any]:
    return make(
        source_id,
        title=title,
        text=text,
        purpose="Where the staging database runs",
        useWhen=["connecting to the staging database"],
        **extra,
    )


OLD = resource("db-old", "Staging database host", "The staging database is on stg-db-1.")
NEW = resource("db-new", "Staging database host since the move", "It is on stg-db-2.")


def put(run: Run, *items: dict[str, Any], args: tuple[str, ...] = (), **where: Any) -> Any:
    result = run("put", "-", *args, input=list(items), **where)
    assert result.code == 0, result.stderr
    assert schema_errors("put-output", result.json) == []
    return result.json


def ids(run: Run, *items: dict[str, Any], **where: Any) -> list[str]:
    return [r["id"] for r in put(run, *items, **where)["results"]]


def searched(run: Run, *options: str, **where: Any) -> dict[str, Any]:
    result = run("search", QUERY, "--mode", "lexical", *options, **where)
    assert result.code == 0, result.stderr
    assert schema_errors("search-output", result.json) == []
    return {r["citation"]["id"]: r for r in result.json["results"]}


def recalled(run: Run, *options: str, session: str, **where: Any) -> dict[str, Any]:
    result = run(
        "recall", "-", "--mode", "lexical", "--session", session, *options, input=QUERY, **where
    )
    assert result.code == 0, result.stderr
    assert schema_errors("recall-output", result.json) == []
    return {item["id"]: item for item in result.json["results"] if item["kind"] == "resource"}


def test_a_superseded_resource_is_not_searched_or_recalled_but_is_as_of_before(
    xb_proc: Run, store_dir: Path
) -> None:
    old, new = ids(xb_proc, OLD, NEW)
    stored = next((store_dir / "resources").rglob(f"{old}.yaml")).read_bytes()
    before = xb_proc("get", old).json
    assert {old, new} <= set(searched(xb_proc))

    done = xb_proc("supersede", old, new)
    assert done.code == 0, done.stderr
    assert schema_errors("entry-supersede-output", done.json) == []
    assert done.json["status"] == "superseded"
    again = xb_proc("supersede", old, new)
    assert again.json["status"] == "unchanged" and again.json["commit"] is None

    assert set(searched(xb_proc)) == {new}
    assert old not in recalled(xb_proc, session="s1")
    assert new in recalled(xb_proc, session="s2")
    earlier = recalled(xb_proc, "--as-of", "2000-01-01", session="s3")
    assert old in earlier and new not in earlier  # NEW holds from the supersede on
    marked = recalled(xb_proc, "--include-superseded", session="s4")
    assert marked[old]["why"]["supersededBy"] == [new]
    # the old resource is untouched: same bytes, same id, same digest
    assert next((store_dir / "resources").rglob(f"{old}.yaml")).read_bytes() == stored
    assert xb_proc("get", old).json == before and digest(before) == digest(xb_proc("get", old).json)
    assert xb_proc("doctor").code == 0


def test_put_with_supersedes_and_validity_answers_by_date(xb_proc: Run, store_dir: Path) -> None:
    (old,) = ids(xb_proc, OLD)
    plain = put(xb_proc, NEW)  # the bytes a put without facts stores
    new = plain["results"][0]["id"]
    stored = next((store_dir / "resources").rglob(f"{new}.yaml")).read_bytes()
    later = {**NEW, "updatedAt": "2026-10-08T00:00:00.000Z"}
    result = put(xb_proc, later, args=("--supersedes", old, "--valid-from", "2025-06-01"))
    assert result["updated"] == 1 and result["droppedFields"] == 0
    with_facts = {**later, "supersedes": [old], "validFrom": "2025-06-01"}
    assert schema_errors("put-input", with_facts) == []
    assert put(xb_proc, with_facts)["results"][0]["status"] == "unchanged"  # fields: no drop
    assert set(searched(xb_proc)) == {new}
    assert set(recalled(xb_proc, "--as-of", "2025-05-31T23:59:59Z", session="a")) == {old}
    assert set(recalled(xb_proc, "--as-of", "2025-06-01", session="b")) == {new}
    # the resource file holds only the original fields
    text = next((store_dir / "resources").rglob(f"{new}.yaml")).read_text()
    for key in ("supersedes", "validFrom", "validUntil", "status", "proposedBy"):
        assert f"\n{key}:" not in text
    assert len(stored) > 0


def test_a_resource_past_its_valid_until_is_not_searched(xb_proc: Run) -> None:
    old, new = ids(xb_proc, OLD, NEW)
    assert (
        xb_proc(
            "put",
            "-",
            "--valid-until",
            "2021-01-01",
            input={**OLD, "updatedAt": "2026-10-08T00:00:00Z"},
        ).code
        == 0
    )
    assert set(searched(xb_proc)) == {new}
    assert set(recalled(xb_proc, "--as-of", "2020-06-01", session="a")) >= {old}
    marked = recalled(xb_proc, "--include-superseded", session="b")
    assert marked[old]["why"]["expired"] == "2021-01-01T00:00:00.000Z"


def test_a_put_reports_possible_conflicts_and_changes_them_not(xb_proc: Run) -> None:
    first = put(xb_proc, OLD)
    assert first["results"][0]["possibleConflicts"] == []
    old = first["results"][0]["id"]
    before = xb_proc("get", old).json
    (result,) = put(xb_proc, NEW)["results"]
    assert [c["id"] for c in result["possibleConflicts"]] == [old]
    assert result["possibleConflicts"][0]["name"] == OLD["title"]
    assert xb_proc("get", old).json == before
    other = put(xb_proc, resource("x", "Sourdough starter feeding", "Flour and water."))
    assert other["results"][0]["possibleConflicts"] == []
    replacing = put(
        xb_proc, resource("db-3", "Staging database host", "stg-db-3", supersedes=[old])
    )
    assert old not in [c["id"] for c in replacing["results"][0].get("possibleConflicts", [])]


def test_a_proposed_resource_is_invisible_until_accepted(xb_proc: Run) -> None:
    (old,) = ids(xb_proc, OLD, args=("--agent", "claude"))  # in force by default
    assert old in searched(xb_proc)
    assert xb_proc("config", "review.agentWrites", "proposed").code == 0
    written = put(xb_proc, NEW, args=("--agent", "claude"))
    (result,) = written["results"]
    new = result["id"]
    assert result["proposed"] is True and [c["id"] for c in result["possibleConflicts"]] == [old]
    assert new not in searched(xb_proc) and new not in recalled(xb_proc, session="a")
    assert xb_proc("get", new).code == 0  # kept, readable by id

    queue = xb_proc("review")
    assert queue.code == 0, queue.stderr
    assert schema_errors("review-output", queue.json) == []
    (item,) = queue.json["proposals"]
    assert item["id"] == new and item["kind"] == "resource"
    assert item["proposedBy"] == {"agent": "claude"} and item["name"] == NEW["title"]
    assert [c["id"] for c in item["possibleConflicts"]] == [old]

    accepted = xb_proc("review", "accept", new)
    assert accepted.code == 0, accepted.stderr
    assert schema_errors("review-decision-output", accepted.json) == []
    assert new in searched(xb_proc) and new in recalled(xb_proc, session="b")
    assert xb_proc("review").json["count"] == 0
    twice = xb_proc("review", "accept", new)
    assert twice.code == 4 and twice.stdout == ""


def test_an_agent_proposal_never_changes_a_resource_in_force(xb_proc: Run, store_dir: Path) -> None:
    (old,) = ids(xb_proc, OLD)
    assert xb_proc("config", "review.agentWrites", "proposed").code == 0
    before = snapshot_files(store_dir)
    changed = {**OLD, "text": "It moved.", "updatedAt": "2026-10-08T00:00:00Z"}
    result = xb_proc("put", "-", "--agent", "claude", input=changed)
    assert result.code == 5 and result.stdout == ""
    assert len(result.stderr.strip().splitlines()) == 1
    assert snapshot_files(store_dir) == before
    same = xb_proc("put", "-", "--agent", "claude", input=OLD)  # the same again: nothing
    assert same.code == 0 and same.json["commit"] is None
    assert old in searched(xb_proc)


def test_review_reject_and_edit_of_resources(xb_proc: Run, tmp_path: Path) -> None:
    assert xb_proc("config", "review.agentWrites", "proposed").code == 0
    old, new = ids(xb_proc, OLD, NEW, args=("--agent", "a"))
    rejected = xb_proc("review", "reject", old, "--reason", "wrong host")
    assert rejected.code == 0, rejected.stderr
    assert rejected.json["rejected"] == [old]
    gone = xb_proc("get", old)
    assert gone.code == 3 and "wrong host" in gone.stderr
    editor = tmp_path / "editor.py"
    editor.write_text(
        "import sys, pathlib\n"
        "p = pathlib.Path(sys.argv[1])\n"
        "p.write_text(p.read_text().replace('stg-db-2', 'stg-db-22'))\n"
    )
    edited = xb_proc("review", "edit", new, env={"EDITOR": f"{sys.executable} {editor}"})
    assert edited.code == 0, edited.stderr
    assert edited.json["accepted"] == [new]
    assert xb_proc("get", new).json["text"] == "It is on stg-db-22."
    assert new in searched(xb_proc)
    assert xb_proc("review").json["count"] == 0
    assert xb_proc("doctor").code == 0
    # a person's put of the rejected resource, newer than the tombstone, brings it back
    back = {**OLD, "updatedAt": "2999-01-01T00:00:00Z"}
    assert xb_proc("put", "-", input=back).code == 0
    assert old in searched(xb_proc)


def test_review_accepts_entries_and_resources_in_one_commit(xb_proc: Run) -> None:
    assert xb_proc("config", "review.agentWrites", "proposed").code == 0
    (rid,) = ids(xb_proc, OLD, args=("--agent", "a"))
    entry = {"kind": "memory", "name": "db host", "body": "stg-db-1"}
    written = xb_proc("entry", "put", "-", "--agent", "a", input=entry)
    eid = written.json["results"][0]["id"]
    assert {p["id"] for p in xb_proc("review").json["proposals"]} == {rid, eid}
    before = xb_proc("log", "--limit", "1").json["commits"][0]["commit"]
    done = xb_proc("review", "accept", rid, eid)
    assert done.code == 0, done.stderr
    log = xb_proc("log", "--limit", "2").json["commits"]
    assert log[0]["commit"] == done.json["commit"] and log[1]["commit"] == before


def test_log_and_show_link_both_ways(xb_proc: Run) -> None:
    old, new = ids(xb_proc, OLD, NEW)
    before = xb_proc("log", "--limit", "1").json["commits"][0]["commit"]
    assert xb_proc("supersede", old, new).code == 0
    old_log, new_log = xb_proc("log", old), xb_proc("log", new)
    assert schema_errors("log-output", old_log.json) == []
    assert old_log.json["supersededBy"] == [new] and "supersedes" not in old_log.json
    assert new_log.json["supersedes"] == [old] and "supersededBy" not in new_log.json
    shown = xb_proc("show", old, "--at", "main")
    assert shown.code == 0 and shown.json["supersededBy"] == [new]
    assert "supersededBy" not in xb_proc("show", old, "--at", before).json
    assert xb_proc("show", new, "--at", "main").json["supersedes"] == [old]


def test_a_merge_of_two_devices_keeps_both_links(xb: Run, tmp_path: Path) -> None:
    """Each device supersedes another resource through the same one; after they sync,
    it supersedes both."""
    from tests.cli.test_remotes import bare

    a, b, remote = tmp_path / "a", tmp_path / "b", bare(tmp_path)
    third = resource("db-guess", "Staging database host guess", "stg-db-0")
    old, new, guess = ids(xb, OLD, NEW, third, store=a)
    assert xb("remote", "add", "origin", str(remote), store=a).code == 0
    assert xb("remote", "push", store=a).code == 0
    assert xb("clone", str(remote), str(b), store=None).code == 0
    assert xb("supersede", old, new, store=a).code == 0
    assert xb("supersede", guess, new, store=b).code == 0
    assert xb("remote", "push", store=a).code == 0
    pulled = xb("remote", "pull", store=b)
    assert pulled.code == 0 and pulled.json["state"] == "merged", pulled.stderr
    assert xb("remote", "push", store=b).code == 0
    assert xb("remote", "pull", store=a).code == 0
    for store in (a, b):
        assert sorted(xb("log", new, store=store).json["supersedes"]) == sorted([old, guess])
        assert xb("log", old, store=store).json["supersededBy"] == [new]
        assert set(searched(xb, store=store)) == {new}
        assert xb("doctor", store=store).code == 0


def test_mcp_put_lands_proposed_and_propose_entry_waits_for_review(
    xb_proc: Run, store_dir: Path
) -> None:
    from xbrain.mcp_server import Tools

    (old,) = ids(xb_proc, OLD)
    tools = Tools(store_dir, store_dir.parent / "cache", wait=5, agent="claude")
    result = tools.call("put", {"resources": [NEW]})
    (written,) = result["results"]
    assert written["proposed"] is True and [c["id"] for c in written["possibleConflicts"]] == [old]
    assert schema_errors("put-output", result) == []
    entry = {"kind": "memory", "name": "db host", "body": "stg-db-2", "queries": [QUERY]}
    proposed = tools.call("propose_entry", {"entries": [entry], "session": "s9"})
    assert schema_errors("entry-put-output", proposed) == []
    queue = xb_proc("review").json["proposals"]
    assert {p["id"] for p in queue} == {written["id"], proposed["results"][0]["id"]}
    by_entry = next(p for p in queue if p["kind"] == "memory")
    assert by_entry["proposedBy"] == {"agent": "claude", "session": "s9"}
    assert written["id"] not in searched(xb_proc)
    assert json.dumps(proposed).count("proposed") >= 0


def test_purge_of_a_resource_removes_its_facts_from_history(xb_proc: Run, store_dir: Path) -> None:
    import subprocess

    (rid,) = ids(xb_proc, OLD)
    assert xb_proc("put", "-", "--valid-until", "2999-01-01", input=OLD).code == 0
    assert (store_dir / "resource-facts").is_dir()
    done = xb_proc("purge", rid, "--yes")
    assert done.code == 0, done.stderr
    names = subprocess.run(
        ["git", "-C", str(store_dir), "log", "--all", "--name-only", "--format="],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert all(rid not in name for name in names)
    assert xb_proc("doctor").json["ok"] is True


def test_search_include_superseded_and_as_of(xb_proc: Run) -> None:
    old, new = ids(xb_proc, OLD, NEW)
    assert xb_proc("supersede", old, new).code == 0
    marked = searched(xb_proc, "--include-superseded")
    assert marked[old]["standing"] == {"supersededBy": [new]} and "standing" not in marked[new]
    assert set(searched(xb_proc, "--as-of", "2000-01-01")) == {old}
    bad = xb_proc("search", QUERY, "--as-of", "yesterday")
    assert bad.code == 4 and bad.stdout == ""


def test_search_with_facts_stays_on_the_fast_path(xb_proc: Run, store_dir: Path) -> None:
    """Which resources stand comes from a derived file that reflects main: a search of a
    store with facts imports no git or YAML machinery either."""
    import subprocess

    old, new = ids(xb_proc, OLD, NEW)
    assert xb_proc("supersede", old, new).code == 0
    assert set(searched(xb_proc)) == {new}  # builds the index
    argv = [sys.executable, "-X", "importtime", "-m", "xbrain", "search", QUERY]
    result = subprocess.run(
        [*argv, "--mode", "lexical", "--store", str(store_dir)], capture_output=True, text=True
    )
    assert result.returncode == 0
    assert [r["citation"]["id"] for r in json.loads(result.stdout)["results"]] == [new]
    imported = {line.split("|")[-1].strip() for line in result.stderr.splitlines()}
    assert not any(name.startswith(("dulwich", "ruamel")) for name in imported)


def test_what_a_proposal_supersedes_is_no_conflict(xb_proc: Run) -> None:
    (old,) = ids(xb_proc, OLD)
    assert xb_proc("config", "review.agentWrites", "proposed").code == 0
    written = put(xb_proc, NEW, args=("--agent", "a", "--supersedes", old))
    (result,) = written["results"]
    assert result["proposed"] is True and result["possibleConflicts"] == []
    (item,) = xb_proc("review").json["proposals"]
    assert item["supersedes"] == [old] and item["possibleConflicts"] == []
    assert old in searched(xb_proc)  # a proposal hides nothing until accepted
    assert xb_proc("review", "accept", result["id"]).code == 0
    assert set(searched(xb_proc)) == {result["id"]}
