"""Automatic sync (issue 47): pull at session start, push after writes, in the background;
``xbrain status`` says what happened. Offline is normal."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.conftest import EXAMPLES, Result, head, make
from xbrain.schemas import schema_errors

Run = Callable[..., Result]
FAST = {"XBRAIN_SYNC_DEBOUNCE": "0.2"}


def bare_main(bare: Path) -> str | None:
    ref = bare / "refs" / "heads" / "main"
    return ref.read_text().strip() if ref.exists() else None


def eventually(check: Callable[[], Any], what: str) -> Any:
    """Poll until ``check()`` is truthy (a background process finishing); bounded."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"never happened: {what}")


def new_bare(tmp_path: Path, name: str) -> Path:
    from dulwich.repo import Repo

    bare = tmp_path / name
    Repo.init_bare(str(bare), mkdir=True, default_branch=b"main").close()
    return bare


def test_sync_auto_pushes_after_a_write_and_status_says_so(
    xb_proc: Run, store_dir: Path, tmp_path: Path
) -> None:
    origin = new_bare(tmp_path, "origin.git")
    assert xb_proc("init").code == 0
    assert xb_proc("remote", "add", "origin", str(origin)).code == 0
    assert xb_proc("remote", "push").code == 0
    assert xb_proc("status").json["sync"]["auto"] is False
    on = xb_proc("config", "sync.auto", "on")
    assert on.code == 0 and on.json == {"sync": {"auto": True}}
    assert xb_proc("config", "sync.auto", "maybe").code == 2
    assert xb_proc("put", str(EXAMPLES / "synthetic-resource.json"), env=FAST).code == 0
    eventually(lambda: bare_main(origin) == head(store_dir), "the write pushed")
    status = xb_proc("status").json
    assert schema_errors("status-output", status) == []
    assert status["sync"]["auto"] is True
    eventually(lambda: xb_proc("status").json["sync"]["store"]["lastSync"], "noted")
    assert xb_proc("status").json["sync"]["store"]["ahead"] == 0


def test_offline_is_normal_a_write_succeeds_and_the_error_is_reported(
    xb_proc: Run, store_dir: Path, tmp_path: Path
) -> None:
    origin = new_bare(tmp_path, "origin.git")
    assert xb_proc("init").code == 0
    assert xb_proc("remote", "add", "origin", str(origin)).code == 0
    assert xb_proc("remote", "push").code == 0
    assert xb_proc("config", "sync.auto", "on").code == 0
    assert xb_proc("remote", "remove", "origin").code == 0  # a remote that cannot be reached
    assert xb_proc("remote", "add", "origin", "git://127.0.0.1:9/away.git").code == 0
    put = xb_proc("put", str(EXAMPLES / "synthetic-resource.json"), env=FAST)
    assert put.code == 0, put.stderr
    state = eventually(
        lambda: xb_proc("status").json["sync"]["store"]["lastError"], "the error noted"
    )
    assert "origin" in state
    assert xb_proc("status").json["sync"]["store"]["ahead"] == 1  # the put, not pushed


def test_session_start_pulls_every_team_in_the_background(
    xb_proc: Run, xb: Run, store_dir: Path, tmp_path: Path
) -> None:
    team = new_bare(tmp_path, "team.git")
    maker = tmp_path / "maker"
    for args in (
        ("put", str(EXAMPLES / "synthetic-resource.json")),
        ("remote", "add", "origin", str(team)),
        ("remote", "push"),
    ):
        assert xb(*args, store=maker).code == 0
    assert xb_proc("init").code == 0
    assert xb_proc("team", "add", "eng", str(team), store=None).code == 0
    later = tmp_path / "later.json"
    later.write_text(json.dumps(make("later-one", title="A later team note about sync")))
    assert xb("put", str(later), store=maker).code == 0
    assert xb("remote", "push", store=maker).code == 0
    clone = Path(os.environ["XDG_DATA_HOME"]) / "xbrain" / "teams" / "eng"

    payload = json.dumps({"hook_event_name": "SessionStart", "session_id": "s"})
    env = {**os.environ, "XBRAIN_STORE": str(store_dir)}
    hook = [sys.executable, "-m", "xbrain", "hook", "claude-code"]
    ran = subprocess.run(hook, input=payload, capture_output=True, text=True, env=env)
    assert ran.returncode == 0 and head(clone) != bare_main(team)  # off: nothing pulled
    said = json.loads(ran.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "Nothing syncs unless" in said and "Automatic sync" not in said
    assert xb_proc("config", "sync.auto", "on").code == 0
    ran = subprocess.run(hook, input=payload, capture_output=True, text=True, env=env)
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout)["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    # the reminder says what is true: with sync.auto on, writes are pushed unasked
    said = json.loads(ran.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "Automatic sync is on" in said and "Nothing syncs" not in said
    eventually(lambda: head(clone) == bare_main(team), "the team pulled")
    found = xb_proc("search", "later team note sync").json["results"]
    assert [r["layer"] for r in found][:1] == ["team:eng"]
    teams = xb_proc("status").json["sync"]["teams"]
    assert teams[0]["name"] == "eng" and teams[0]["lastSync"]
