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

from tests.cli.test_team_share import MEMORY, Member, stock, team_remote
from tests.conftest import Result

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
    assert carl("status").json["sync"]["auto"] is True
