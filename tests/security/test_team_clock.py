"""One member cannot lock a team out of pulling with a record dated years ahead (issue
47's trial, finding 1): ``share`` and every push to a team refuse what the members'
pulls would refuse, a tombstone xbrain makes for a record removed with plain git is
never dated past that bound, and a refused team pull names the team. Commits a pull
makes in a member's clone carry the member's identity (finding 4)."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.cli.test_team_share import Member, team_remote, tree
from tests.conftest import Result, make
from tests.security.test_team_trust import git

Run = Callable[..., Result]
FUTURE = "2099-01-01T00:00:00.000Z"
pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="no git binary")


def clone_of(member: Member) -> Path:
    return Path(member.env["XDG_DATA_HOME"]) / "xbrain" / "teams" / "eng"


def team_head(bare: Path) -> str:
    out = subprocess.run(
        ["git", "--git-dir", str(bare), "rev-parse", "main"],
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.strip()


def clone_head(member: Member) -> str:
    return git(clone_of(member), "rev-parse", "HEAD").strip()


def dated_record(member: Member, tmp_path: Path) -> str:
    """A resource of ``member``'s own store dated 2099 (put takes any date); its id."""
    (tmp_path / "ahead.json").write_text(json.dumps(make("ahead", updatedAt=FUTURE)))
    return str(member.ok("put", str(tmp_path / "ahead.json"))["results"][0]["id"])


def test_share_refuses_a_record_dated_far_ahead_and_changes_nothing(
    xb_proc: Run, tmp_path: Path
) -> None:
    bare, url = team_remote(xb_proc, tmp_path)
    ann = Member(xb_proc, tmp_path / "ann", "ann")
    rid = dated_record(ann, tmp_path)
    ann.ok("team", "add", "eng", url, store=False)
    before, mine = tree(bare), clone_head(ann)

    refused = ann("share", rid, "--team", "eng")

    assert refused.code == 4, refused.stderr
    assert rid in refused.stderr and "updatedAt" in refused.stderr
    assert "team eng" in refused.stderr and len(refused.stderr.strip().splitlines()) == 1
    assert tree(bare) == before and clone_head(ann) == mine  # nothing committed or pushed


def test_a_team_push_never_sends_a_record_dated_far_ahead(xb_proc: Run, tmp_path: Path) -> None:
    bare, url = team_remote(xb_proc, tmp_path)
    ann = Member(xb_proc, tmp_path / "ann", "ann")
    ann.ok("init")
    ann.ok("team", "add", "eng", url, store=False)
    (tmp_path / "ahead.json").write_text(json.dumps(make("ahead", updatedAt=FUTURE)))
    # written straight into the team's clone (not through share): sync must not send it
    wrote = xb_proc("put", str(tmp_path / "ahead.json"), store=clone_of(ann), env=ann.env)
    assert wrote.code == 0, wrote.stderr
    sent = team_head(bare)

    synced = ann("team", "sync", "eng", store=False)

    assert synced.code != 0 and team_head(bare) == sent
    assert "updatedAt" in synced.stderr and "push to team eng" in synced.stderr, synced.stderr


def test_a_record_removed_with_git_leaves_no_tombstone_dated_ahead(
    xb_proc: Run, tmp_path: Path
) -> None:
    bare, url = team_remote(xb_proc, tmp_path)
    ann = Member(xb_proc, tmp_path / "ann", "ann")
    rita = Member(xb_proc, tmp_path / "rita", "rita")
    for member in (ann, rita):
        member.ok("init")
    rita.ok("team", "add", "eng", url, store=False)
    # a record dated 2099 reaches the team from outside team push (an older xbrain, or
    # a plain remote push from a store whose origin is the team)
    maker = tmp_path / "maker"
    (tmp_path / "ahead.json").write_text(json.dumps(make("ahead", updatedAt=FUTURE)))
    rid = xb_proc("put", str(tmp_path / "ahead.json"), store=maker).json["results"][0]["id"]
    assert xb_proc("remote", "push", store=maker).code == 0

    refused = rita("team", "pull", "eng", store=False)
    assert refused.code == 4 and "team eng" in refused.stderr, refused.stderr
    assert "remote origin" not in refused.stderr and "wrong clock" not in refused.stderr

    refused = ann("team", "add", "eng", url, store=False)  # checked as its pulls are
    assert refused.code == 4 and "team eng" in refused.stderr, refused.stderr
    # an older xbrain's team add took the team as it is: a plain clone, as it restores
    assert xb_proc("clone", url, str(clone_of(ann)), store=None, env=ann.env).code == 0
    work = tmp_path / "plain-git"  # a member removes it with plain git
    git(tmp_path, "clone", "-q", "-b", "main", str(bare), str(work))
    (gone,) = [p for p in tree(bare) if rid in p]
    git(work, "rm", "-q", gone)
    git(work, "commit", "-qm", "drop the record dated 2099")
    git(work, "push", "-q", "origin", "main")

    synced = ann("team", "sync", "eng", store=False)  # pulls, adds a tombstone, pushes
    assert synced.code == 0, synced.stderr
    dead = [p for p in tree(bare) if p.startswith("tombstones/") and rid in p]
    assert dead, tree(bare)
    shown = git(bare, "show", f"main:{dead[0]}")
    assert "deletedAt" in shown and "2099" not in shown
    pulled = rita("team", "pull", "eng", store=False)  # not locked out again
    assert pulled.code == 0, pulled.stderr
    log = git(clone_of(ann), "log", "--format=%an <%ae> %s")
    made = [line for line in log.splitlines() if "team pull eng" in line]
    assert made and all(line.startswith(ann.identity) for line in made), log


def test_a_refused_team_pull_refuses_the_review_list_as_it_refuses_a_decision(
    xb_proc: Run, tmp_path: Path
) -> None:
    """``team review NAME`` pulls first through the same path as a decision: a team that
    cannot be reached answers from the last pull (exit 0, ``pulled: false``), a pull the
    team's commits make refuse is refused with its own exit code and the team named
    (it used to list the last pull, exit 0, as if the team were only offline)."""
    _, url = team_remote(xb_proc, tmp_path)
    rita = Member(xb_proc, tmp_path / "rita", "rita")
    rita.ok("init")
    rita.ok("team", "add", "eng", url, store=False)
    maker = tmp_path / "maker"
    (tmp_path / "ahead.json").write_text(json.dumps(make("ahead", updatedAt=FUTURE)))
    assert xb_proc("put", str(tmp_path / "ahead.json"), store=maker).code == 0
    assert xb_proc("remote", "push", store=maker).code == 0
    before = clone_head(rita)

    listed = rita("team", "review", "eng", store=False)

    assert listed.code == 4, (listed.code, listed.stdout, listed.stderr)
    assert "Could not pull team eng first, so nothing was listed" in listed.stderr
    assert len(listed.stderr.strip().splitlines()) == 1 and not listed.stdout
    decided = rita("team", "review", "eng", "accept", "anything")
    assert decided.code == 4 and "nothing was decided" in decided.stderr, decided.stderr
    assert clone_head(rita) == before


def test_a_refused_team_add_leaves_no_data_folder_behind(xb_proc: Run, tmp_path: Path) -> None:
    """A first ``team add`` refused (a record dated ahead: exit 4) removes every folder
    it made, the data folder ``xbrain/`` above the teams folder too."""
    _, url = team_remote(xb_proc, tmp_path)
    maker = tmp_path / "maker"
    (tmp_path / "ahead.json").write_text(json.dumps(make("ahead", updatedAt=FUTURE)))
    assert xb_proc("put", str(tmp_path / "ahead.json"), store=maker).code == 0
    assert xb_proc("remote", "push", store=maker).code == 0
    ann = Member(xb_proc, tmp_path / "ann", "ann")
    ann.ok("init")
    data = Path(ann.env["XDG_DATA_HOME"])
    made_before = sorted(p.relative_to(tmp_path) for p in data.rglob("*")) if data.exists() else []

    refused = ann("team", "add", "eng", url, store=False)

    assert refused.code == 4 and "team eng" in refused.stderr, refused.stderr
    after = sorted(p.relative_to(tmp_path) for p in data.rglob("*")) if data.exists() else []
    assert after == made_before
    assert not (data / "xbrain").exists()
