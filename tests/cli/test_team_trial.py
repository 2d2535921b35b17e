"""Team memory as a fresh-clone trial used it (two HOMEs, one bare team repository):
a member with no store of their own, what a pull and a review print, the team's rules
in the hook, settings shown back."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.cli.test_team_share import MEMORY, Member, joined, stock, team_remote
from tests.conftest import Result
from xbrain.schemas import schema_errors

Run = Callable[..., Result]
PROMPT = "build tips: make -j2 on the CI box?"
pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="no git binary")


def accepted_team(xb_proc: Run, tmp_path: Path) -> tuple[str, Member, Member, dict[str, str]]:
    """A team whose reviewer Rita accepted Ann's entry; its URL, Ann, Rita, Ann's ids."""
    _bare, url = team_remote(xb_proc, tmp_path)
    ann = Member(xb_proc, tmp_path / "ann", "ann")
    rita = Member(xb_proc, tmp_path / "rita", "rita")
    ids = stock(ann, tmp_path)
    for member in (ann, rita):
        member.ok("team", "add", "eng", url, store=False)
    ann.ok("share", ids["entry"], "--team", "eng")
    rita.ok("team", "review", "eng", "accept", ids["entry"])
    return url, ann, rita, ids


def prompt_hook(run: Callable[..., Result], **kwargs: Any) -> Result:
    payload = {"hook_event_name": "UserPromptSubmit", "prompt": PROMPT, "session_id": "s1"}
    return run("hook", "claude-code", input=json.dumps(payload), **kwargs)


def test_a_member_with_a_team_and_no_store_of_their_own_is_answered_from_the_team(
    xb_proc: Run, tmp_path: Path
) -> None:
    url, _ann, _rita, _ids = accepted_team(xb_proc, tmp_path)
    home = tmp_path / "carl"
    store = home / "store"
    env = {"XDG_DATA_HOME": str(home / "data"), "HOME": str(home), "XBRAIN_STORE": str(store)}
    env["XDG_CACHE_HOME"] = str(home / "cache")

    def carl(*args: str, input: Any = None) -> Result:
        return xb_proc(*args, input=input, store=None, env=env)

    assert carl("team", "add", "eng", url).code == 0
    hook = prompt_hook(carl)
    assert hook.code == 0 and hook.stderr == ""
    assert "make -j2" in json.loads(hook.stdout)["hookSpecificOutput"]["additionalContext"]
    tool = {"hook_event_name": "PostToolUse", "tool_name": "Bash", "session_id": "s1"}
    assert carl("hook", "claude-code", input=json.dumps(tool)).code == 0
    log = home / "cache" / "xbrain" / "hook.log"
    assert not log.exists() or "No store" not in log.read_text()
    recalled = carl("recall", "-", input=PROMPT)
    assert recalled.code == 0 and recalled.stderr == ""
    assert [r["id"] for r in recalled.json["results"]] == [MEMORY]
    assert not os.path.lexists(store)  # no read made a store

    on = carl("config", "sync.auto", "on")  # a setting is a write: as identity.name, it
    assert on.code == 0, on.stderr  # creates the store
    assert on.json == {"sync": {"auto": True}} and (store / ".git").is_dir()
    sync = carl("status").json["sync"]
    assert sync["auto"] is True and sync["store"]["ahead"] is None
    assert sync["store"]["note"].endswith("no remote named origin")  # says why not


def test_an_accepted_entry_is_the_authors_and_the_hook_says_it_is_the_teams(
    xb_proc: Run, tmp_path: Path
) -> None:
    _url, ann, rita, _ids = accepted_team(xb_proc, tmp_path)
    got = rita.ok("entry", "get", MEMORY)
    assert got["layer"] == "team:eng" and got["provenance"]["committer"] == ann.identity
    assert got["trust"] == got["entry"]["trust"] == "team"  # one answer
    assert schema_errors("entry-get-output", got) == []
    said = json.loads(prompt_hook(rita).stdout)["hookSpecificOutput"]["additionalContext"]
    (line,) = [line for line in said.splitlines() if "make -j2" in line]
    assert "team eng's" in line, said
    assert "the user's and their team's saved rules" in said.splitlines()[0]


def test_team_reviewers_are_shown_back_and_a_non_reviewer_is_told_what_to_do(
    xb_proc: Run, tmp_path: Path
) -> None:
    team = tmp_path / "team-store"
    both = "Rita <rita@example.org>, Bob <bob@example.org>"
    listed = ["Rita <rita@example.org>", "Bob <bob@example.org>"]
    set_ = xb_proc("config", "team.reviewers", both, store=team)
    assert set_.code == 0, set_.stderr
    assert set_.json["team"] == {"reviewers": listed}
    assert schema_errors("config-output", set_.json) == []
    assert xb_proc("config", store=team).json["team"] == {"reviewers": listed}
    assert "team" not in xb_proc("config", "identity.name", "Me", store=tmp_path / "own").json

    _bare, url = team_remote(xb_proc, tmp_path)
    ann = Member(xb_proc, tmp_path / "ann", "ann")
    ids = stock(ann, tmp_path)
    ann.ok("team", "add", "eng", url, store=False)
    ann.ok("share", ids["resource"], "--team", "eng")
    refused = ann("team", "review", "eng", "accept", ids["resource"])
    assert refused.code == 4 and refused.stderr.count("\n") == 1
    assert "not a reviewer" in refused.stderr and "identity" not in refused.stderr
    assert "a reviewer of the team accepts" in refused.stderr
    ann.ok("config", "identity.name", "Rita")  # Rita's name, Ann's email: a typo
    typo = ann("team", "review", "eng", "accept", ids["resource"])
    assert typo.code == 4 and "set your identity" in typo.stderr


def test_a_share_or_review_not_pushed_says_so_on_stdout_and_stderr(
    xb_proc: Run, tmp_path: Path
) -> None:
    from tests.security.test_team_trust import offline

    _bare, url, ann, rita, ids = joined(xb_proc, tmp_path)
    with offline(ann, url):
        shared = ann("share", ids["resource"], "--team", "eng")
    ann.ok("team", "sync", "eng", store=False)
    rita.ok("team", "pull", "eng", store=False)
    with offline(rita, url):
        decided = rita("team", "review", "eng", "accept", ids["resource"])
    for result in (shared, decided):
        assert result.code == 8
        assert result.json["pushed"] is False and "team sync" in result.json["note"]
        assert result.stderr.count("\n") == 1 and "team sync" in result.stderr
        assert result.stderr.startswith("Could not push to team eng: ")
    assert decided.json["decided"]["state"] == "accepted"  # kept, for the next sync
    synced = rita.ok("team", "sync", "eng", store=False)
    assert synced["synced"][0]["pushed"] is True
