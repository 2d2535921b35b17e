"""Team memory bugs a fresh-clone trial found (two HOMEs, a bare team repository, a
member with push rights and no xbrain pushing with plain git)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.cli.test_team_share import MEMORY, Member, joined, stock, team_remote
from tests.conftest import Result, make
from tests.security.test_team_trust import (
    MALLORY,
    git,
    git_show,
    offline,
    planted_entry,
    push_straight,
)
from xbrain.schemas import schema_errors
from xbrain.timestamps import now_timestamp

Run = Callable[..., Result]
pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="no git binary")


def test_a_forged_accept_merged_by_a_pull_is_blamed_on_its_author(
    xb_proc: Run, tmp_path: Path
) -> None:
    bare, url, ann, rita, ids = joined(xb_proc, tmp_path)
    ann.ok("share", ids["resource"], "--team", "eng")
    rita.ok("team", "pull", "eng", store=False)
    path = f"proposals/{ids['resource']}.yaml"
    forged = git_show(bare, f"main:{path}").replace(b"state: proposed", b"state: accepted")
    forged += f"reviewedAt: '{now_timestamp()}'\nreviewedBy: {rita.identity}\n".encode()
    push_straight(bare, tmp_path, {path: forged})
    forger = git(bare, "rev-parse", "main").strip()
    with offline(ann, url):  # Ann's clone gets a commit of its own: her pull merges
        assert ann("share", ids["entry"], "--team", "eng").code == 8
    synced = ann.ok("team", "sync", "eng", store=False)
    assert synced["synced"][0]["state"] == "merged"
    ann.ok("share", ids["private"], "--team", "eng")  # a commit on top of her merge
    for member in (ann, rita):
        listed = member.ok("team", "review", "eng", store=False)
        doubts = [d for d in listed["untrusted"] if d["id"] == ids["resource"]]
        assert [(d["by"], d["commit"]) for d in doubts] == [(MALLORY, forger)], (
            member.identity,
            doubts,
        )
    assert rita("get", ids["resource"]).code == 3  # the forged accept serves nothing


def test_a_review_after_a_refused_pull_says_the_pull_was_refused(
    xb_proc: Run, tmp_path: Path
) -> None:
    bare, url = team_remote(xb_proc, tmp_path)
    ann = Member(xb_proc, tmp_path / "ann", "ann")
    rita = Member(xb_proc, tmp_path / "rita", "rita")
    ids = stock(ann, tmp_path)
    (tmp_path / "own.json").write_text(json.dumps(make("rita-own", title="Rita's own")))
    own = rita.ok("put", str(tmp_path / "own.json"))["results"][0]["id"]
    for member in (ann, rita):
        member.ok("team", "add", "eng", url, store=False)
    with offline(rita, url):  # two commits of hers the team lacks
        assert rita("share", own, "--team", "eng").code == 8
    ann.ok("share", ids["entry"], "--team", "eng")
    assert rita.ok("team", "pull", "eng", store=False)["state"] == "merged"  # not pushed
    ann.ok("share", ids["resource"], "--team", "eng")  # after Rita's last pull
    push_straight(bare, tmp_path, {"..evil/x": b"hostile\n"})
    head = git(bare, "rev-parse", "main")
    refused = rita("team", "pull", "eng", store=False)
    assert refused.code == 4 and "..evil" in refused.stderr

    for verb in ("accept", "reject"):
        decided = rita("team", "review", "eng", verb, ids["resource"])
        assert decided.code == 4, decided.stderr
        assert decided.stderr.count("\n") == 1 and decided.stdout == ""
        assert "..evil" in decided.stderr and "nothing was decided" in decided.stderr
    assert git(bare, "rev-parse", "main") == head
    status = rita.ok("status")
    assert schema_errors("status-output", status) == []
    (team,) = status["sync"]["teams"]
    assert "..evil" in team["lastError"] and "note" not in team
    assert (team["ahead"], team["behind"]) == (3, 0), team  # her share's two, her merge


def test_a_team_pull_gives_one_trust_per_record(xb_proc: Run, tmp_path: Path) -> None:
    bare, url = team_remote(xb_proc, tmp_path)
    ann = Member(xb_proc, tmp_path / "ann", "ann")
    rita = Member(xb_proc, tmp_path / "rita", "rita")
    stock(ann, tmp_path)
    rita.ok("init")
    for member in (ann, rita):
        member.ok("team", "add", "eng", url, store=False)
    push_straight(bare, tmp_path, dict([planted_entry(ann)]))
    pulled = rita.ok("team", "pull", "eng", store=False)
    assert [d["id"] for d in pulled["untrusted"]] == [MEMORY]
    assert [(e["id"], e["trust"]) for e in pulled["received"]["entries"]] == [(MEMORY, "untrusted")]
    rita.ok("team", "review", "eng", "accept", MEMORY)
    pulled = ann.ok("team", "pull", "eng", store=False)  # Rita's accept arrives
    assert pulled["untrusted"] == []
    assert [(e["id"], e["trust"]) for e in pulled["received"]["entries"]] == [(MEMORY, "team")]


def test_team_add_refuses_what_a_team_pull_would_and_leaves_nothing(
    xb_proc: Run, tmp_path: Path
) -> None:
    _bare, url = team_remote(xb_proc, tmp_path)
    maker = tmp_path / "maker"
    ahead = make("ahead", updatedAt="2099-01-01T00:00:00.000Z")
    (tmp_path / "ahead.json").write_text(json.dumps(ahead))
    assert xb_proc("put", str(tmp_path / "ahead.json"), store=maker).code == 0
    assert xb_proc("remote", "push", store=maker).code == 0
    ann = Member(xb_proc, tmp_path / "ann", "ann")
    teams = Path(ann.env["XDG_DATA_HOME"]) / "xbrain" / "teams"

    added = ann("team", "add", "eng", url, store=False)
    assert added.code == 4, added.stderr
    assert added.stderr.count("\n") == 1 and added.stdout == ""
    assert "team eng" in added.stderr and "2099" in added.stderr
    assert not teams.exists() or list(teams.iterdir()) == []
    assert ann.ok("team", "list", store=False)["teams"] == []
    assert ann.ok("status")["sync"]["teams"] == []
