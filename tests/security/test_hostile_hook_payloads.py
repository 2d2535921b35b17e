"""Hook payloads are outside input: the file a tool names and the tool's name reach path
routing and the execution trace, so odd values must route nothing, record nothing
but a plain name, and never fail the hook."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.conftest import Result

Run = Callable[..., Result]


def hook(store: Path, body: Any, cache: Path) -> tuple[int, str, str]:
    proc = subprocess.run(
        [sys.executable, "-m", "xbrain", "hook", "claude-code"],
        input=json.dumps(body).encode(),
        capture_output=True,
        env={**os.environ, "XBRAIN_STORE": str(store), "XBRAIN_CACHE_DIR": str(cache)},
        timeout=60,
    )
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


def test_odd_files_and_tool_names_route_nothing_and_record_only_plain_names(
    xb: Run, xb_proc: Run, store_dir: Path, tmp_path: Path
) -> None:
    everything = {"kind": "rule", "name": "everywhere", "paths": ["**"], "body": "Hello."}
    assert xb("entry", "put", "-", input=json.dumps(everything)).code == 0
    project, cache = tmp_path / "proj", tmp_path / "cache"
    (project / ".git").mkdir(parents=True)
    base = {"hook_event_name": "PreToolUse", "session_id": "h-1", "cwd": str(project)}
    for file in (
        "../../etc/passwd",  # climbs out of the project
        "/etc/passwd",
        str(tmp_path / "proj-other" / "a.py"),  # a sibling that shares the root's prefix
        "a\u0000b.py",
        "x" * 10_000,
        ["a.py"],
        {"path": "a.py"},
        None,
    ):
        payload = {**base, "tool_name": "Edit", "tool_input": {"file_path": file}}
        assert hook(store_dir, payload, cache) == (0, "", ""), file
    for cwd in ("relative/dir", "", 5, "/" + "d" * 5000):  # (unusable: the hook's own cwd)
        payload = {**base, "cwd": cwd, "tool_name": "Read", "tool_input": {"file_path": "a.py"}}
        code, _, err = hook(store_dir, payload, cache)
        assert (code, err) == (0, ""), cwd
    log = (cache / "hook.log").read_text() if (cache / "hook.log").exists() else ""
    assert "Internal error" not in log
    inside = {
        **base,
        "session_id": "h-2",
        "tool_name": "Edit",
        "tool_input": {"file_path": "src/a.py"},
    }
    assert "everywhere" in hook(store_dir, inside, cache)[1]  # a plain file still routes
    post = {"hook_event_name": "PostToolUse", "session_id": "h-1"}
    for name in ("Bash\nInjected", "x" * 500, ["Bash"], None, "mcp__srv__tool"):
        payload = {**post, "tool_name": name, "tool_response": ["not", "a", "dict"]}
        assert hook(store_dir, payload, cache) == (0, "", "")
    tools = xb_proc("telemetry", "--session", "h-1").json["tools"]
    assert [t["tool"] for t in tools] == ["other", "other", "other", "other", "mcp__srv__tool"]
