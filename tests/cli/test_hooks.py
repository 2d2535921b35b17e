"""The Claude Code hooks, driven with recorded hook payloads on stdin."""

from __future__ import annotations

import importlib.util
import json
import os
import stat
import subprocess
import sys
import time
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


def hook(
    store: Path, stdin: str, *python_options: str, **env: str
) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "XBRAIN_STORE": str(store), "XBRAIN_BIN": "", **env}
    return subprocess.run(
        [sys.executable, *python_options, str(RECALL)],
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
    state = Path(os.environ["XBRAIN_CACHE_DIR"]) / "hook-sessions" / f"{session}.json"
    assert len(json.loads(state.read_text())) == shown  # remembered under the cache dir
    assert stat.S_IMODE(state.stat().st_mode) == 0o600
    assert stat.S_IMODE(state.parent.stat().st_mode) == 0o700
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


def fake_xbrain(folder: Path, body: str) -> Path:
    """An executable standing in for the xbrain CLI."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "fakexb"
    script.write_text(f"#!{sys.executable}\nimport os, sys, time\n{body}\n")
    script.chmod(0o700)
    return script


def test_busy_store_still_answers_or_stays_silent(xb: Run, store_dir: Path) -> None:
    import filelock

    xb("put", str(EXAMPLES / "synthetic-resource.json"))
    with filelock.FileLock(str(store_dir / ".git" / "xbrain.lock")):
        result = hook(store_dir, payload("keyboard dialog", f"busy-{uuid.uuid4().hex}"))
    assert result.returncode == 0 and result.stderr == ""
    # searching takes no lock, so a busy store (a write in progress) still recalls
    context = json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "https://example.com/dialog-guide" in context


@pytest.mark.parametrize(
    ("body", "why"),
    [
        ("sys.exit(1)", "the CLI fails"),
        ("print('not json')", "garbage output"),
        ("print('{\"results\": 5}')", "wrong shape"),
        ("sys.stdout.write('x' * 10_000_000)", "a flood"),
    ],
)
def test_cli_failures_mean_no_output(tmp_path: Path, body: str, why: str) -> None:
    script = fake_xbrain(tmp_path / "bin", body)
    result = hook(tmp_path / "store", payload("keyboard"), XBRAIN_BIN=str(script))
    assert (result.returncode, result.stdout, result.stderr) == (0, "", ""), why


def test_a_hung_search_is_killed_at_the_timeout(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    script = fake_xbrain(
        tmp_path / "bin", f"open({str(pid_file)!r}, 'w').write(str(os.getpid()))\ntime.sleep(60)"
    )
    started = time.monotonic()
    result = hook(
        tmp_path / "store", payload("keyboard"), XBRAIN_BIN=str(script), XBRAIN_HOOK_TIMEOUT="1"
    )
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    assert time.monotonic() - started < 20
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid_file.read_text()), 0)  # killed and reaped, not left running


def test_xbrain_bin_may_be_a_name_on_path(tmp_path: Path) -> None:
    answer = {
        "results": [
            {
                "resource": {"id": "resource_" + "a" * 64, "title": "On PATH", "purpose": "p"},
                "citation": {
                    "url": "https://example.com/on-path",
                    "updatedAt": "2026-11-30T00:00:00Z",
                },
            }
        ]
    }
    body = f"assert sys.argv[1:3] == ['search', '-'] and sys.stdin.read() == 'keyboard'\nprint({json.dumps(json.dumps(answer))})"
    folder = fake_xbrain(tmp_path / "bin", body).parent
    path = f"{folder}{os.pathsep}{os.environ['PATH']}"
    result = hook(
        tmp_path / "store", payload("keyboard", "on-path"), XBRAIN_BIN="fakexb", PATH=path
    )
    context = json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]
    assert (
        "- On PATH" in context
        and "cite: https://example.com/on-path (updated 2026-11-30)" in context
    )


def load_recall() -> Any:
    spec = importlib.util.spec_from_file_location("claude_recall", RECALL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("spawn", [True, False], ids=["posix_spawn", "subprocess fallback"])
def test_search_child_gets_the_query_on_stdin(monkeypatch: pytest.MonkeyPatch, spawn: bool) -> None:
    recall = load_recall()
    if not spawn:
        monkeypatch.delattr(os, "posix_spawnp")
    echo = "import sys; sys.stdout.buffer.write(sys.stdin.buffer.read().upper()); print('x', file=sys.stderr)"
    assert (
        recall.Search([sys.executable, "-c", echo]).answer("héllo", 30) == "héllo".encode().upper()
    )
    failing = recall.Search([sys.executable, "-c", "print('partial'); raise SystemExit(3)"])
    assert failing.answer("q", 30) is None
    started = time.monotonic()
    assert (
        recall.Search([sys.executable, "-c", "import time; time.sleep(60)"]).answer("q", 0.5)
        is None
    )
    assert time.monotonic() - started < 20


def test_a_missing_cli_leaves_a_note_in_the_hook_log(tmp_path: Path) -> None:
    """Issue 12, item 12: with xbrain not on Claude Code's PATH the hook printed nothing
    and said nothing anywhere."""
    cache = tmp_path / "cache"
    store, stdin = tmp_path / "store", payload("keyboard focus in dialogs", "s-missing")
    # -S: no site-packages, so this interpreter cannot import xbrain either
    proc = hook(store, stdin, "-S", XBRAIN_CACHE_DIR=str(cache), PATH=str(tmp_path / "empty"))
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    log = (cache / "hook.log").read_text()
    assert "XBRAIN_BIN" in log and len(log.splitlines()) == 1
    missing = str(tmp_path / "nowhere" / "xbrain")
    proc = hook(store, stdin, XBRAIN_CACHE_DIR=str(cache), XBRAIN_BIN=missing)
    assert (proc.returncode, proc.stdout) == (0, "")
    assert "not an executable" in (cache / "hook.log").read_text().splitlines()[-1]
    assert (cache / "hook.log").stat().st_mode & 0o077 == 0


def test_old_session_files_expire(xb: Run, store_dir: Path, tmp_path: Path) -> None:
    """Issue 12, item 13: session files accumulated forever."""
    xb("put", str(EXAMPLES / "synthetic-resource.json"))
    cache = tmp_path / "hookcache"
    sessions = cache / "hook-sessions"
    sessions.mkdir(parents=True)
    old = sessions / "s-old.json"
    old.write_text("[]")
    week_ago = time.time() - 8 * 86400
    os.utime(old, (week_ago, week_ago))
    recent = sessions / "s-recent.json"
    recent.write_text("[]")
    result = hook(
        store_dir, payload("keyboard focus in a React dialog", "s-new"), XBRAIN_CACHE_DIR=str(cache)
    )
    assert result.returncode == 0 and result.stdout
    assert not old.exists() and recent.exists() and (sessions / "s-new.json").exists()
