"""The Claude Code hooks, driven with recorded hook payloads on stdin."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EXAMPLES, ROOT, Result, make

Run = Callable[..., Result]
RECALL = ROOT / "hooks" / "claude_recall.py"
SESSION = f"test-{uuid.uuid4().hex}"  # a session nobody else uses
SESSION_START = ROOT / "hooks" / "claude_session_start.py"


def payload(prompt: str, session: str | None = None) -> str:
    session = session or SESSION
    return json.dumps(
        {
            "session_id": session,
            "transcript_path": "/tmp/transcript.jsonl",
            "cwd": "/work/project",
            "hook_event_name": "UserPromptSubmit",
            "prompt": prompt,
        }
    )


def hook(store: Path, stdin: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "XBRAIN_STORE": str(store), "XBRAIN_BIN": "", **env}
    return subprocess.run(
        [sys.executable, str(RECALL)],
        input=stdin,
        capture_output=True,
        text=True,
        env=environment,
        timeout=60,
    )


def test_recall_shape_and_citations(xb: Run, store_dir: Path) -> None:
    xb("put", str(EXAMPLES / "synthetic-resource.json"))
    result = hook(
        store_dir,
        payload("How should keyboard focus work in a React dialog?", f"s-{uuid.uuid4().hex}"),
    )
    assert result.returncode == 0 and result.stderr == ""
    output = json.loads(result.stdout)
    assert set(output) == {"hookSpecificOutput"}
    specific = output["hookSpecificOutput"]
    assert specific["hookEventName"] == "UserPromptSubmit"
    context = specific["additionalContext"]
    assert context.startswith("xbrain memory candidates") and "data, not instructions" in context
    assert "Fictional accessible dialog guide" in context
    assert "cite: https://example.com/dialog-guide" in context
    assert "limitations: Fictional test resource" in context


def test_budget_limit_and_session_dedup(
    xb: Run, json_file: Callable[[Any], str], store_dir: Path
) -> None:
    xb(
        "put",
        json_file(
            [make(f"k{i}", title=f"Keyboard note {i}", text="keyboard " * 50) for i in range(8)]
        ),
    )
    session = f"dedup-{uuid.uuid4().hex}"
    first = json.loads(
        hook(
            store_dir, payload("keyboard", session), XBRAIN_HOOK_LIMIT="5", XBRAIN_HOOK_BUDGET="700"
        ).stdout
    )
    context = first["hookSpecificOutput"]["additionalContext"]
    assert len(context) <= 700 and context.count("\n- ") >= 1
    shown = context.count("\n- ")
    second = json.loads(hook(store_dir, payload("keyboard", session), XBRAIN_HOOK_LIMIT="5").stdout)
    again = second["hookSpecificOutput"]["additionalContext"]
    assert again.count("\n- ") == 5
    titles_first = {line for line in context.splitlines() if line.startswith("- ")}
    titles_again = {line for line in again.splitlines() if line.startswith("- ")}
    assert not titles_first & titles_again  # never the same resource twice in a session
    other = json.loads(
        hook(store_dir, payload("keyboard", session="other"), XBRAIN_HOOK_LIMIT="5").stdout
    )
    assert other["hookSpecificOutput"]["additionalContext"].count("\n- ") == 5
    assert shown <= 5


@pytest.mark.parametrize(
    "stdin",
    [
        "",
        "not json",
        json.dumps({"prompt": ""}),
        json.dumps({"session_id": "../../etc", "prompt": "keyboard"}),
    ],
)
def test_never_fails_the_prompt(xb: Run, store_dir: Path, stdin: str) -> None:
    xb("put", str(EXAMPLES / "synthetic-resource.json"))
    result = hook(store_dir, stdin)
    assert result.returncode == 0 and result.stderr == ""


def test_missing_or_broken_store_is_silent(tmp_path: Path) -> None:
    assert hook(tmp_path / "missing", payload("keyboard")).stdout == ""
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "junk.txt").write_text("not a store")
    result = hook(broken, payload("keyboard"))
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def test_session_start_reminder() -> None:
    result = subprocess.run(
        [sys.executable, str(SESSION_START)],
        input=json.dumps({"hook_event_name": "SessionStart"}),
        capture_output=True,
        text=True,
    )
    output = json.loads(result.stdout)["hookSpecificOutput"]
    assert (
        output["hookEventName"] == "SessionStart" and "xbrain search" in output["additionalContext"]
    )
