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
    assert len(context) <= 4000


def test_budget_limit_and_session_disclosure(
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
            store_dir,
            payload("keyboard note", session),
            XBRAIN_HOOK_LIMIT="5",
            XBRAIN_HOOK_BUDGET="1000",
        ).stdout
    )
    context = first["hookSpecificOutput"]["additionalContext"]
    assert len(context) <= 1000 and context.count("\n- ") >= 1
    shown = context.count("\n- ")
    state = store_dir / ".git" / "xbrain" / "sessions" / f"{session}.json"
    assert len(json.loads(state.read_text())["shown"]) == shown  # kept by xbrain recall
    assert stat.S_IMODE(state.stat().st_mode) == 0o600
    second = json.loads(
        hook(store_dir, payload("keyboard note", session), XBRAIN_HOOK_LIMIT="5").stdout
    )
    again = second["hookSpecificOutput"]["additionalContext"]
    assert again.count("\n- ") == min(5, 8 - shown)
    titles_first = {line for line in context.splitlines() if line.startswith("- ")}
    titles_again = {line for line in again.splitlines() if line.startswith("- ")}
    assert not titles_first & titles_again  # never the same resource twice in a session
    other = json.loads(
        hook(store_dir, payload("keyboard note", session="other"), XBRAIN_HOOK_LIMIT="5").stdout
    )
    assert other["hookSpecificOutput"]["additionalContext"].count("\n- ") == 5
    assert shown <= 5


def test_rules_come_in_full_then_as_one_liners(xb: Run, store_dir: Path) -> None:
    xb("entry", "import", str(EXAMPLES / "memex"))
    session = f"rules-{uuid.uuid4().hex}"
    first = hook(store_dir, payload("can I git push --force to main?", session))
    context = json.loads(first.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "- [rule] no-force-push: Never run `git push --force`" in context
    assert "\n  Use `--force-with-lease`" in context  # continuation lines indented
    again = hook(store_dir, payload("git push --force again?", session))
    later = json.loads(again.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "- [rule] no-force-push: Rule: no force-push on shared branches." in later
    quiet = hook(store_dir, payload("ok thanks", session))
    assert (quiet.returncode, quiet.stdout) == (0, "")


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
        "hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "On PATH"}
    }
    body = (
        "assert sys.argv[1:] == ['hook', 'claude-code'], sys.argv\n"
        "asked = __import__('json').loads(sys.stdin.read())\n"
        "assert asked['session_id'] == 'on-path' and asked['prompt'] == 'keyboard', asked\n"
        f"print({json.dumps(json.dumps(answer))})"
    )
    folder = fake_xbrain(tmp_path / "bin", body).parent
    path = f"{folder}{os.pathsep}{os.environ['PATH']}"
    result = hook(
        tmp_path / "store", payload("keyboard", "on-path"), XBRAIN_BIN="fakexb", PATH=path
    )
    assert json.loads(result.stdout) == answer


def test_a_large_payload_reaches_a_slow_reader(tmp_path: Path) -> None:
    """A PreToolUse payload can carry a whole file: the relay must not block on a full
    pipe while the CLI is still starting."""
    answer = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": "ok"}}
    body = (
        "time.sleep(0.5)\n"
        "asked = __import__('json').loads(sys.stdin.read())\n"
        "assert len(asked['tool_input']['content']) == 600_000\n"
        f"print({json.dumps(json.dumps(answer))})"
    )
    script = fake_xbrain(tmp_path / "bin", body)
    big = {
        "hook_event_name": "PreToolUse",
        "tool_name": "Write",
        "tool_input": {"content": "x" * 600_000},
    }
    result = hook(tmp_path / "store", json.dumps(big), XBRAIN_BIN=str(script))
    assert json.loads(result.stdout) == answer


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
    assert recall.Search([sys.executable, "-c", echo]).answer("héllo".encode(), 30) == (
        "héllo".encode().upper()
    )
    failing = recall.Search([sys.executable, "-c", "print('partial'); raise SystemExit(3)"])
    assert failing.answer(b"q", 30) is None
    started = time.monotonic()
    assert (
        recall.Search([sys.executable, "-c", "import time; time.sleep(60)"]).answer(b"q", 0.5)
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


def test_old_session_files_expire(xb: Run, store_dir: Path) -> None:
    """Issue 12, item 13: session files accumulated forever (now kept by xbrain recall)."""
    xb("put", str(EXAMPLES / "synthetic-resource.json"))
    sessions = store_dir / ".git" / "xbrain" / "sessions"
    sessions.mkdir(parents=True)
    old = sessions / "s-old.json"
    old.write_text('{"shown": {}}')
    week_ago = time.time() - 8 * 86400
    os.utime(old, (week_ago, week_ago))
    recent = sessions / "s-recent.json"
    recent.write_text('{"shown": {}}')
    result = hook(store_dir, payload("keyboard focus in a React dialog", "s-new"))
    assert result.returncode == 0 and result.stdout
    assert not old.exists() and recent.exists() and (sessions / "s-new.json").exists()


TOOL_HOOK = ROOT / "hooks" / "claude_tool_guidance.py"
STOP_HOOK = ROOT / "hooks" / "claude_stop.py"


def run_hook(script: Path, store: Path, stdin: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "XBRAIN_STORE": str(store), "XBRAIN_BIN": ""}
    return subprocess.run(
        [sys.executable, str(script)],
        input=stdin,
        capture_output=True,
        text=True,
        env=environment,
        timeout=60,
    )


def test_pre_tool_use_adds_the_tools_guidance(xb: Run, store_dir: Path) -> None:
    guidance = {
        "kind": "tool-guidance",
        "name": "push-after-tests",
        "queries": ["git push origin"],
        "events": ["PreToolUse"],
        "body": "Run the test suite before you push.",
        "oneLiner": "Tests before push.",
    }
    xb("entry", "put", "-", input=json.dumps(guidance))
    session = f"tool-{uuid.uuid4().hex}"

    def call(command: str) -> subprocess.CompletedProcess[str]:
        body = {
            "session_id": session,
            "cwd": "/work/project",
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": command},
        }
        return run_hook(TOOL_HOOK, store_dir, json.dumps(body))

    first = call("git push origin main")
    assert first.returncode == 0 and first.stderr == ""
    specific = json.loads(first.stdout)["hookSpecificOutput"]
    assert specific["hookEventName"] == "PreToolUse" and set(specific) == {
        "hookEventName",
        "additionalContext",
    }  # never a permission decision
    assert "[tool-guidance] push-after-tests: Run the test suite" in specific["additionalContext"]
    again = json.loads(call("git push origin main").stdout)["hookSpecificOutput"]
    assert "Tests before push." in again["additionalContext"]
    assert call("ls -la").stdout == ""
    # the same entry never comes up for a prompt: it is PreToolUse guidance
    assert hook(store_dir, payload("git push origin main", session)).stdout == ""


def test_stop_blocks_on_a_matching_stop_rule_once(xb: Run, store_dir: Path, tmp_path: Path) -> None:
    rule = {
        "kind": "stop-rule",
        "name": "tests-must-pass",
        "queries": ["tests are failing"],
        "events": ["Stop"],
        "body": "Do not finish while tests are failing: fix them first.",
    }
    xb("entry", "put", "-", input=json.dumps(rule))
    transcript = tmp_path / "transcript.jsonl"

    def stop(last: str, active: bool = False) -> subprocess.CompletedProcess[str]:
        lines = [
            {"type": "user", "message": {"role": "user", "content": "fix the bug"}},
            {
                "type": "assistant",
                "message": {"role": "assistant", "content": [{"type": "text", "text": last}]},
            },
        ]
        transcript.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
        body = {
            "session_id": "stop-1",
            "transcript_path": str(transcript),
            "hook_event_name": "Stop",
            "stop_hook_active": active,
        }
        return run_hook(STOP_HOOK, store_dir, json.dumps(body))

    blocked = stop("I changed the parser, but two tests are failing. Stopping here.")
    assert blocked.returncode == 0 and blocked.stderr == ""
    answer = json.loads(blocked.stdout)
    assert answer["decision"] == "block"
    assert "Do not finish while tests are failing" in answer["reason"]
    assert stop("Two tests are failing.", active=True).stdout == ""  # blocks once in a row
    assert stop("All tests pass; the fix is in.").stdout == ""
    broken = run_hook(STOP_HOOK, store_dir, json.dumps({"transcript_path": "/nonexistent"}))
    assert (broken.returncode, broken.stdout) == (0, "")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # a transcript path that would block a reader forever
    started = time.monotonic()
    blocked_read = run_hook(STOP_HOOK, store_dir, json.dumps({"transcript_path": str(fifo)}))
    assert (blocked_read.returncode, blocked_read.stdout) == (0, "")
    assert time.monotonic() - started < 20
