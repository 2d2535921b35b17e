"""Resource facts and review after the hostile trial of issue 46, through the real CLI:
a person's put of a proposal is an accept (said in the result and the commit), a change
of facts alone is an update with a subject, ``[]``/``null`` clear facts, every result
lists ``possibleConflicts``, and an agent's supersede never changes a record in force."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.conftest import Result, make, snapshot_files
from xbrain.kinds.entry import entry_id
from xbrain.schemas import schema_errors

Run = Callable[..., Result]
UNTIL = "2999-01-01T00:00:00.000Z"


def put(run: Run, *items: dict[str, Any], args: tuple[str, ...] = ()) -> dict[str, Any]:
    result = run("put", "-", *args, input=list(items))
    assert result.code == 0, result.stderr
    assert schema_errors("put-output", result.json) == []
    return dict(result.json)


def summary(run: Run) -> str:
    """The subject of the newest commit."""
    return str(run("log", "--limit", "1").json["commits"][0]["summary"])


def facts(run: Run, rid: str) -> dict[str, Any]:
    """What ``log ID`` says of a resource's links."""
    found = run("log", rid)
    assert found.code == 0, found.stderr
    return {k: found.json[k] for k in ("supersedes", "supersededBy") if k in found.json}


def sidecar(store: Path, rid: str) -> str:
    path = store / "resource-facts" / rid[9:11] / f"{rid}.yaml"
    return path.read_text() if path.exists() else ""


def test_a_persons_identical_put_of_a_proposal_accepts_it(xb: Run, store_dir: Path) -> None:
    assert xb("config", "review.agentWrites", "proposed").code == 0
    p5 = make("p5", title="Proxy settings")
    (proposed,) = put(xb, p5, args=("--agent", "bot"))["results"]
    rid = proposed["id"]
    assert proposed["proposed"] is True and "status: proposed" in sidecar(store_dir, rid)

    again = put(xb, p5)  # a person, the same content
    (result,) = again["results"]
    assert result["status"] == "accepted" and "proposed" not in result
    assert again["commit"] is not None and again["updated"] == 1 and again["unchanged"] == 0
    assert summary(xb) == f'put: accept {rid} "Proxy settings"'
    assert "status:" not in sidecar(store_dir, rid)
    assert xb("review").json["count"] == 0

    same = put(xb, p5)  # now truly the same: nothing, no commit
    assert same["results"][0]["status"] == "unchanged" and same["commit"] is None


def test_a_persons_new_text_of_a_proposal_says_it_accepted_it(xb: Run) -> None:
    assert xb("config", "review.agentWrites", "proposed").code == 0
    rid = put(xb, make("p6"), args=("--agent", "bot"))["results"][0]["id"]
    newer = make("p6", text="Edited by a person.", updatedAt="2027-01-01T00:00:00.000Z")
    (result,) = put(xb, newer)["results"]
    assert result["status"] == "updated" and "proposed" not in result
    assert summary(xb).startswith("put: update 1, accept 1")
    assert xb("review").json["count"] == 0 and rid


def test_a_change_of_facts_alone_is_an_update_with_a_subject(xb: Run) -> None:
    rid = put(xb, make("a", title="Alpha"))["results"][0]["id"]
    changed = put(xb, make("a", title="Alpha"), args=("--valid-until", UNTIL))
    (result,) = changed["results"]
    assert result["status"] == "updated" and changed["commit"] is not None
    assert changed["updated"] == 1 and changed["unchanged"] == 0
    assert summary(xb) == f'put: facts {rid} "Alpha"'
    same = put(xb, make("a", title="Alpha"), args=("--valid-until", UNTIL))
    assert same["results"][0]["status"] == "unchanged" and same["commit"] is None


def test_empty_supersedes_and_null_validity_clear_the_facts(xb: Run, store_dir: Path) -> None:
    old, new = (r["id"] for r in put(xb, make("old"), make("new"))["results"])
    args = ("--supersedes", old, "--valid-from", "2020-01-01", "--valid-until", UNTIL)
    assert put(xb, make("new"), args=args)["commit"] is not None
    assert facts(xb, new) == {"supersedes": [old]}
    assert "validUntil" in sidecar(store_dir, new)

    cleared = put(xb, {**make("new"), "supersedes": [], "validFrom": None, "validUntil": None})
    (result,) = cleared["results"]
    assert result["status"] == "updated" and cleared["commit"] is not None
    assert facts(xb, new) == {} and facts(xb, old) == {}
    for key in ("supersedes", "validFrom", "validUntil"):
        assert f"{key}:" not in sidecar(store_dir, new)
    again = put(xb, {**make("new"), "supersedes": [], "validFrom": None, "validUntil": None})
    assert again["results"][0]["status"] == "unchanged" and again["commit"] is None


def test_every_put_result_lists_possible_conflicts(xb: Run) -> None:
    first = put(xb, make("a", title="Alpha"), make("b", title="Beta"))
    assert [r["possibleConflicts"] for r in first["results"]] == [[], []]
    same = put(xb, make("a", title="Alpha"))
    assert same["results"][0]["possibleConflicts"] == []
    entry = xb("entry", "put", "-", input={"kind": "memory", "name": "n", "body": "b"})
    assert entry.code == 0, entry.stderr
    assert schema_errors("entry-put-output", entry.json) == []
    assert entry.json["results"][0]["possibleConflicts"] == []


def test_an_agents_supersede_of_records_in_force_is_refused(xb: Run, store_dir: Path) -> None:
    a, c = (r["id"] for r in put(xb, make("a"), make("c"))["results"])
    one, two = entry_id("global", "one"), entry_id("global", "two")
    memories = [{"kind": "memory", "name": n, "body": n} for n in ("one", "two")]
    assert xb("entry", "put", "-", input=memories).code == 0
    assert xb("config", "review.agentWrites", "proposed").code == 0
    for old, new in ((a, c), (one, two)):
        before = snapshot_files(store_dir)
        refused = xb("supersede", old, new, "--agent", "bot")
        assert refused.code == 5 and refused.stdout == ""
        assert len(refused.stderr.strip().splitlines()) == 1
        assert "Propose" in refused.stderr and "in force" in refused.stderr
        assert snapshot_files(store_dir) == before
    assert facts(xb, c) == {}

    # the agent's own proposal may say what it supersedes; a person's supersede stands
    mine = put(xb, make("d"), args=("--agent", "bot"))["results"][0]["id"]
    assert xb("supersede", a, mine, "--agent", "bot").code == 0
    assert xb("review").json["proposals"][0]["supersedes"] == [a]
    assert xb("supersede", a, c).code == 0 and facts(xb, c) == {"supersedes": [a]}
