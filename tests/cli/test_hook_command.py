"""``xbrain hook claude-code``: every Claude Code hook event answered by the CLI itself."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EXAMPLES, Result, share_compiled_dictionary

Run = Callable[..., Result]


def hook(store: Path, body: Any, cache: Path, *args: str, **env: str) -> tuple[int, str, str]:
    stdin = (
        body
        if isinstance(body, bytes)
        else (body if isinstance(body, str) else json.dumps(body)).encode()
    )
    share_compiled_dictionary(cache)
    proc = subprocess.run(
        [sys.executable, "-m", "xbrain", "hook", "claude-code", *args],
        input=stdin,
        capture_output=True,
        env={**os.environ, "XBRAIN_STORE": str(store), "XBRAIN_CACHE_DIR": str(cache), **env},
        timeout=60,
    )
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


@pytest.fixture
def stocked(xb: Run, store_dir: Path) -> Path:
    assert xb("entry", "import", str(EXAMPLES / "memex")).code == 0
    assert xb("put", str(EXAMPLES / "synthetic-resource.json")).code == 0
    guidance = {
        "kind": "tool-guidance",
        "name": "push-after-tests",
        "queries": ["git push origin"],
        "events": ["PreToolUse"],
        "body": "Run the test suite before you push.",
    }
    stop_rule = {
        "kind": "stop-rule",
        "name": "tests-must-pass",
        "queries": ["tests are failing"],
        "events": ["Stop"],
        "body": "Do not finish while tests are failing.",
    }
    assert xb("entry", "put", "-", input=json.dumps([guidance, stop_rule])).code == 0
    return store_dir


def test_every_event_in_one_command(stocked: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    prompt = {
        "hook_event_name": "UserPromptSubmit",
        "session_id": "h-1",
        "cwd": "/tmp",
        "prompt": "can I git push --force to main?",
    }
    code, out, err = hook(stocked, prompt, cache)
    assert (code, err) == (0, "")
    context = json.loads(out)["hookSpecificOutput"]
    assert context["hookEventName"] == "UserPromptSubmit"
    assert "[rule] no-force-push: " in context["additionalContext"]
    again = json.loads(hook(stocked, prompt, cache)[1])["hookSpecificOutput"]
    assert "Rule: no force-push on shared branches." in again["additionalContext"]

    tool = {
        "hook_event_name": "PreToolUse",
        "session_id": "h-1",
        "tool_name": "Bash",
        "tool_input": {"command": "git push origin main"},
    }
    specific = json.loads(hook(stocked, tool, cache)[1])["hookSpecificOutput"]
    assert set(specific) == {"hookEventName", "additionalContext"}  # never a decision
    assert "push-after-tests: Run the test suite" in specific["additionalContext"]

    transcript = tmp_path / "t.jsonl"
    said = {"message": {"role": "assistant", "content": "Two tests are failing; stopping."}}
    transcript.write_text(json.dumps(said) + "\n")
    stop = {"hook_event_name": "Stop", "transcript_path": str(transcript)}
    assert json.loads(hook(stocked, stop, cache)[1])["decision"] == "block"
    assert hook(stocked, {**stop, "stop_hook_active": True}, cache)[1] == ""

    start = json.loads(hook(stocked, {"hook_event_name": "SessionStart"}, cache)[1])
    assert "xbrain search" in start["hookSpecificOutput"]["additionalContext"]
    quiet = {**prompt, "prompt": "ok thanks"}
    assert hook(stocked, quiet, cache) == (0, "", "")
    assert not (cache / "hook.log").exists()  # nothing went wrong


DEEP = b"[" * 100_000 + b"]" * 100_000


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"not json",
        b"[1, 2]",
        b'{"prompt": 5}',
        b'{"hook_event_name": "Stop"}',
        b"\xff\xfe{",
        DEEP,  # deeper than the parser goes: was an internal error in the log
        b'{"prompt": "git push --force", "x": ' + DEEP + b"}",
    ],
)
def test_bad_payloads_say_nothing(stocked: Path, tmp_path: Path, body: bytes) -> None:
    """No answer; what is not JSON is one clear line in the log (it was an "Internal
    error", for a deep one too)."""
    assert hook(stocked, body, tmp_path) == (0, "", "")
    log = tmp_path / "hook.log"
    lines = log.read_text().splitlines() if log.exists() else []
    assert len(lines) <= 1 and not any("Internal error" in line for line in lines)
    if lines:
        assert lines[0].endswith("The hook payload on stdin is not a JSON object.")


def test_a_broken_store_or_a_timeout_is_a_line_in_the_log(stocked: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    prompt = {"hook_event_name": "UserPromptSubmit", "prompt": "git push --force to main"}
    (stocked / "xbrain.yaml").write_text("format: something-else\n")
    (stocked / ".git" / "refs" / "heads" / "main").write_text("0" * 40 + "\n")
    assert hook(stocked, prompt, cache) == (0, "", "")
    log = (cache / "hook.log").read_text()
    assert len(log.splitlines()) == 1 and "git push" not in log  # never the prompt
    assert (cache / "hook.log").stat().st_mode & 0o077 == 0
    assert hook(tmp_path / "missing", prompt, cache, XBRAIN_HOOK_TIMEOUT="0.000001")[:2] == (0, "")
    assert "XBRAIN_HOOK_TIMEOUT" in (cache / "hook.log").read_text().splitlines()[-1]


def test_help_and_unknown_agents_go_to_click(tmp_path: Path) -> None:
    code, out, _ = hook(tmp_path, "", tmp_path, "--help")
    assert code == 0 and "UserPromptSubmit" in out
    proc = subprocess.run(
        [sys.executable, "-m", "xbrain", "hook", "codex"], capture_output=True, text=True
    )
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1


def test_a_timed_out_hook_builds_the_indexes_in_the_background(
    stocked: Path, tmp_path: Path
) -> None:
    """A store whose recall indexes are not built yet (a clone, a bulk import) has them
    built by its first recall; a hook cut off before the build ends kept nothing, so
    every prompt timed out. Now the timed-out hook starts the build, detached, and the
    next prompt is answered; the warm-up shows nothing, so it leaves no telemetry."""
    import time

    from xbrain.recall.warm import behind

    cache, control = tmp_path / "cache", stocked / ".git"
    prompt = {"hook_event_name": "UserPromptSubmit", "prompt": "git push --force to main"}
    assert behind(control)
    assert hook(stocked, prompt, cache, XBRAIN_HOOK_TIMEOUT="0.000001")[:2] == (0, "")
    assert (cache / "hook.log").read_text().rstrip().endswith("in the background")
    deadline = time.monotonic() + 60
    while behind(control) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not behind(control)  # built by the detached process, no command of ours
    assert not (control / "xbrain" / "telemetry.sqlite").exists()
    assert (control / "xbrain" / "warm.lock").stat().st_mode & 0o077 == 0
    answered = json.loads(hook(stocked, prompt, cache)[1])
    assert "no-force-push" in answered["hookSpecificOutput"]["additionalContext"]
    # current indexes: a timeout has another cause, and starts nothing
    assert hook(stocked, prompt, cache, XBRAIN_HOOK_TIMEOUT="0.000001")[:2] == (0, "")
    last = (cache / "hook.log").read_text().splitlines()[-1]
    assert "XBRAIN_HOOK_TIMEOUT" in last and "background" not in last


def test_the_timeout_holds_while_sqlite_waits_for_a_lock(stocked: Path, tmp_path: Path) -> None:
    """A recall that must bring the search index up to date waits for its write lock,
    and a ``reindex`` holds that lock for the whole build (some 30 s on 100,000
    resources). The wait is inside SQLite, in C, where the timer signal the hook used
    could not stop it: the prompt waited for SQLite's own 30 s. The hook now keeps its
    XBRAIN_HOOK_TIMEOUT whatever the work waits on."""
    import sqlite3

    cache = tmp_path / "cache"
    prompt = {"hook_event_name": "UserPromptSubmit", "prompt": "git push --force to main"}
    assert "no-force-push" in hook(stocked, prompt, cache)[1]  # and the indexes are built
    index = stocked / ".git" / "xbrain" / "search.sqlite"
    holder = sqlite3.connect(index, isolation_level=None)
    try:
        holder.execute("UPDATE meta SET value = 'behind' WHERE key = 'commit'")
        holder.execute("BEGIN IMMEDIATE")  # as a build does
        proc = subprocess.run(
            [sys.executable, "-m", "xbrain", "hook", "claude-code"],
            input=json.dumps(prompt).encode(),
            capture_output=True,
            env={
                **os.environ,
                "XBRAIN_STORE": str(stocked),
                "XBRAIN_CACHE_DIR": str(cache),
                "XBRAIN_HOOK_TIMEOUT": "1",
            },
            timeout=15,  # SQLite alone would wait 30 s
        )
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
    assert "XBRAIN_HOOK_TIMEOUT" in (cache / "hook.log").read_text().splitlines()[-1]
    assert "no-force-push" in hook(stocked, prompt, cache)[1]  # answers again


@pytest.mark.parametrize("bad", ["abc", "-1", "0", "nan", "inf", "1e400", "99999999999"])
def test_a_mistyped_tuning_value_falls_back_to_its_default(
    stocked: Path, tmp_path: Path, bad: str
) -> None:
    """Before: a timeout that is no number, not positive or too large for the timer
    (OverflowError), and a limit or budget that is no integer, turned every prompt's
    recall off, with "Internal error" in the log. Now the default is used, and the log
    says which setting was wrong."""
    cache = tmp_path / "cache"
    prompt = {"hook_event_name": "UserPromptSubmit", "prompt": "can I git push --force to main?"}
    tuning = {"XBRAIN_HOOK_TIMEOUT": bad, "XBRAIN_HOOK_LIMIT": bad, "XBRAIN_HOOK_BUDGET": bad}
    code, out, err = hook(stocked, prompt, cache, **tuning)
    assert (code, err) == (0, "")
    assert "[rule] no-force-push: " in json.loads(out)["hookSpecificOutput"]["additionalContext"]
    log = (cache / "hook.log").read_text() if (cache / "hook.log").exists() else ""
    assert "Internal error" not in log
    if bad in ("abc", "nan", "inf", "1e400"):  # not a finite number: each is named
        assert all(f"{name} must be a " in log for name in tuning)


def test_a_log_line_with_text_the_locale_cannot_hold(tmp_path: Path) -> None:
    """Under a C locale without UTF-8, hook.log was written in ASCII: a message naming a
    store path in Chinese was a UnicodeEncodeError, so the hook failed (exit 1, a
    traceback). The log is UTF-8 now and the hook still exits 0."""
    odd = tmp_path / "存储"
    odd.mkdir()
    (odd / "file").write_text("not a store")
    cache = tmp_path / "cache"
    prompt = {"hook_event_name": "UserPromptSubmit", "prompt": "git push --force to main"}
    code, out, err = hook(
        odd / "file",
        prompt,
        cache,
        LC_ALL="C",
        LANG="C",
        PYTHONUTF8="0",
        PYTHONCOERCECLOCALE="0",
    )
    assert (code, out, err) == (0, "", "")
    [line] = (cache / "hook.log").read_text(encoding="utf-8").splitlines()
    assert "Store path is not a directory" in line


def test_a_hook_whose_store_is_not_there_says_so_in_the_log(tmp_path: Path) -> None:
    """Issue 44 item 7: a hook whose store does not exist printed nothing and logged
    nothing, so a misconfigured XBRAIN_STORE looked like a store that never matched.
    Now each such hook writes one line (the store path, never the prompt) to hook.log,
    still exits 0 and prints nothing; SessionStart's reminder needs no store."""
    cache, missing = tmp_path / "cache", tmp_path / "no-such-store"
    events = [
        {"hook_event_name": "UserPromptSubmit", "prompt": "zebra secret git push --force"},
        {"hook_event_name": "PreToolUse", "tool_name": "Edit", "tool_input": {"file_path": "/x"}},
        {"hook_event_name": "PostToolUse", "tool_name": "Bash", "session_id": "s"},
    ]
    for number, payload in enumerate(events, 1):
        assert hook(missing, payload, cache) == (0, "", "")
        lines = (cache / "hook.log").read_text().splitlines()
        assert len(lines) == number and f"No store at {missing}: " in lines[-1]
        assert "zebra" not in lines[-1]
    code, out, err = hook(missing, {"hook_event_name": "SessionStart"}, cache)
    assert (code, err) == (0, "") and "xbrain search" in out
    assert len((cache / "hook.log").read_text().splitlines()) == 3
    assert not missing.exists()


def test_an_edit_recalls_the_rules_whose_paths_match_its_file(
    xb: Run, store_dir: Path, tmp_path: Path
) -> None:
    """Issue 44 item 6, through the hook: PreToolUse of Edit on
    ``migrations/versions/0042_add_col.py`` recalled nothing for a rule with
    ``paths: [migrations/**/*.py]``. Now the rule comes as context, in full once and then
    as its one-liner; a Bash call still gets tool guidance only."""
    rule = {
        "kind": "rule",
        "name": "migrations-reversible",
        "paths": ["migrations/**/*.py"],
        "body": "Every migration needs a downgrade.",
        "oneLiner": "Migrations: write the downgrade.",
    }
    assert xb("entry", "put", "-", input=json.dumps(rule)).code == 0
    project, cache = tmp_path / "proj", tmp_path / "cache"
    (project / ".git").mkdir(parents=True)
    edit = {
        "hook_event_name": "PreToolUse",
        "session_id": "e-1",
        "cwd": str(project),
        "tool_name": "Edit",
        "tool_input": {
            "file_path": str(project / "migrations" / "versions" / "0042_add_col.py"),
            "old_string": "x = 1",
            "new_string": "x = 2",
        },
    }
    texts = []
    for _ in range(2):
        code, out, err = hook(store_dir, edit, cache)
        assert (code, err) == (0, "")
        context = json.loads(out)["hookSpecificOutput"]
        assert context["hookEventName"] == "PreToolUse"
        texts.append(context["additionalContext"])
    assert "- [rule] migrations-reversible: Every migration needs a downgrade." in texts[0]
    assert "- [rule] migrations-reversible: Migrations: write the downgrade." in texts[1]
    bash = {**edit, "tool_name": "Bash", "tool_input": {"command": "ls migrations"}}
    assert hook(store_dir, bash, cache) == (0, "", "")
    assert not (cache / "hook.log").exists()


def test_post_tool_use_records_a_trace_of_tool_names_and_outcomes(
    xb: Run, xb_proc: Run, store_dir: Path, tmp_path: Path
) -> None:
    """Issue 44 item 12: a session's trace held only what recall injected. PostToolUse
    (and PostToolUseFailure) now add each call's tool name and outcome beside it —
    never the tool's input or output — in the private telemetry database, with no
    answer to the agent; switched off with telemetry."""
    from xbrain.schemas import schema_errors

    rule = {"kind": "rule", "name": "deploy-check", "queries": ["deploy the api service"]}
    assert xb("entry", "put", "-", input=json.dumps(rule)).code == 0
    cache, base = tmp_path / "cache", {"session_id": "tr-1", "cwd": str(tmp_path)}
    prompt = {**base, "hook_event_name": "UserPromptSubmit", "prompt": "deploy the api service"}
    assert "deploy-check" in hook(store_dir, prompt, cache)[1]
    calls = [
        {"tool_name": "Bash", "tool_input": {"command": "zebra-secret-cmd"}},
        {"tool_name": "Edit", "tool_response": {"success": False, "error": "zebra-out"}},
        {"tool_name": "mcp__db__query", "hook_event_name": "PostToolUseFailure"},
        {"tool_name": "Read", "tool_response": {"content": "zebra-file-text"}},
    ]
    for call in calls:
        payload = {**base, "hook_event_name": "PostToolUse", **call}
        assert hook(store_dir, payload, cache) == (0, "", "")
    report = xb_proc("telemetry", "--session", "tr-1")
    assert report.code == 0 and schema_errors("telemetry-output", report.json) == []
    assert [t["event"] for t in report.json["trace"]] == ["UserPromptSubmit"]
    assert [(t["tool"], t["outcome"]) for t in report.json["tools"]] == [
        ("Bash", "success"),
        ("Edit", "error"),
        ("mcp__db__query", "error"),
        ("Read", "success"),
    ]
    database = store_dir / ".git/xbrain/telemetry.sqlite"
    stored = b"".join(f.read_bytes() for f in database.parent.glob("telemetry.sqlite*"))
    assert b"zebra" not in stored and oct(database.stat().st_mode & 0o777) == "0o600"
    assert not (cache / "hook.log").exists()
    assert xb("config", "telemetry", "off").code == 0
    hook(store_dir, {**base, "hook_event_name": "PostToolUse", "tool_name": "Bash"}, cache)
    assert len(xb_proc("telemetry", "--session", "tr-1").json["tools"]) == 4
    assert xb_proc("telemetry", "--session", "tr-1", "--observations").code == 2


def test_traces_are_bounded_per_session_and_swept_with_idle_sessions(
    store_dir: Path, xb: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A session's calls stop being recorded at MAX_CALLS, and the calls of sessions idle
    for a week are swept (at most once an hour), as session state is."""
    import sqlite3
    import time

    from xbrain.recall import traces

    assert xb("entry", "put", "-", input=json.dumps({"kind": "rule", "name": "r"})).code == 0
    control = store_dir / ".git"
    monkeypatch.setattr(traces, "MAX_CALLS", 5)
    for _ in range(8):
        traces.record_call(control, "busy", "Bash", "success")
    database = control / "xbrain" / "telemetry.sqlite"
    with sqlite3.connect(database) as conn:
        assert conn.execute("SELECT COUNT(*) FROM tool").fetchone() == (5,)
        old = time.time() - 8 * 86400
        conn.execute("INSERT INTO tool VALUES (?, 'old', 'Bash', 'success')", (old,))
        conn.execute("DELETE FROM swept")  # the last sweep was long ago
    traces.record_call(control, "busy", "Bash", "success")
    with sqlite3.connect(database) as conn:
        sessions = conn.execute("SELECT session, COUNT(*) FROM tool GROUP BY session").fetchall()
    assert sessions == [("busy", 5)]


def test_telemetry_observations_report_what_the_traces_suggest(
    xb: Run, xb_proc: Run, store_dir: Path, tmp_path: Path
) -> None:
    """Issue 44 item 12: ``xbrain telemetry --observations`` reports, and never changes:
    entries never matched, entries shown often whose showing no tool call ever
    followed, and entries that always fire together."""
    from xbrain.schemas import schema_errors

    entries = [
        {"kind": "rule", "name": "deploy-a", "queries": ["deploy the api service"]},
        {"kind": "rule", "name": "deploy-b", "queries": ["deploy the api service now"]},
        {"kind": "rule", "name": "weather", "queries": ["what is the weather like"]},
        {"kind": "rule", "name": "never", "queries": ["rotate the vault keys"]},
    ]
    assert xb("entry", "put", "-", input=json.dumps(entries)).code == 0
    before = subprocess.run(["git", "-C", str(store_dir), "rev-parse", "HEAD"], capture_output=True)
    cache = tmp_path / "cache"

    def event(session: str, name: str, **more: Any) -> str:
        payload = {"session_id": session, "cwd": str(tmp_path), "hook_event_name": name}
        return hook(store_dir, {**payload, **more}, cache)[1]

    for n in range(3):  # acted on: a tool call follows the showing
        out = event(f"d-{n}", "UserPromptSubmit", prompt="deploy the api service now")
        assert "deploy-a" in out and "deploy-b" in out
        event(f"d-{n}", "PostToolUse", tool_name="Bash")
    for n in range(3):  # traced sessions where no tool call followed the showing
        event(f"w-{n}", "PostToolUse", tool_name="Read")
        assert "weather" in event(f"w-{n}", "UserPromptSubmit", prompt="what is the weather like")
    report = xb_proc("telemetry", "--observations")
    assert report.code == 0 and schema_errors("telemetry-output", report.json) == []
    assert report.json["traced"] == {"sessions": 6, "calls": 6, "errors": 0}
    found = [
        (o["type"], [e["name"] for e in o["entries"]], o.get("sessions"))
        for o in report.json["observations"]
    ]
    assert found == [
        ("never-matched", ["never"], None),
        ("not-acted-on", ["weather"], 3),
        ("fire-together", ["deploy-a", "deploy-b"], 3),
    ]
    after = subprocess.run(["git", "-C", str(store_dir), "rev-parse", "HEAD"], capture_output=True)
    assert after.stdout == before.stdout  # a report: nothing retired, nothing merged
