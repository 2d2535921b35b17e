"""``xbrain ui`` over real HTTP: its pages read what the CLI prints, its actions are the
CLI's operations (one commit each, agent ui), and it stops on Ctrl-C or when idle."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from tests.conftest import Result, head
from tests.ui.server import Running, seed, start

pytest.importorskip("starlette", reason="the viewer's extra (xbrain[ui]) is not installed")

Run = Callable[..., Result]


@pytest.fixture
def ids(store_dir: Path) -> dict[str, str]:
    return seed(store_dir)


@pytest.fixture
def ui(store_dir: Path, ids: dict[str, str]) -> Iterator[Running]:
    running = start(store_dir, "--idle", "300")
    yield running
    running.stop()


def test_every_page_shows_what_the_cli_prints(
    ui: Running, ids: dict[str, str], store_dir: Path
) -> None:
    home = ui.get("/")
    assert home.status == 200 and "2 resources" in home.body and "3 entries" in home.body
    assert "1 skills" in home.body and "skill save" in home.body  # recent changes
    rule = ui.get(f"/entry/{ids['rule']}")
    assert rule.status == 200 and "<strong>not</strong>" in rule.body  # Markdown rendered
    assert "<code>git push --force</code>" in rule.body and "entry put" in rule.body  # log
    resource = ui.get(f"/resource/{ids['resource']}")
    assert resource.status == 200 and "https://example.com/dialogs" in resource.body  # cite
    skill = ui.get("/skill/deploy-check")
    assert skill.status == 200 and ids["rev1"] in skill.body and ids["rev2"] in skill.body
    assert "state-published" in skill.body and "state-proposed" in skill.body
    assert "检查数据库迁移" in skill.body  # Level 1 of the published revision
    listed = ui.get("/resources")  # xbrain list: newest first, no layer without a team
    assert listed.status == 200 and "2 resources" in listed.body and "layer" not in listed.body
    assert f"/resource/{ids['resource']}" in listed.body and "部署手册" in listed.body
    skills = ui.get("/skills")
    assert skills.status == 200 and "deploy-check" in skills.body
    memories = ui.get("/entries?kind=memory&status=active")
    assert "部署窗口" in memories.body and "no-force-push" not in memories.body
    assert ui.get("/review").status == 200 and "Nothing to review" in ui.get("/review").body
    telemetry = ui.get("/telemetry")
    assert telemetry.status == 200 and "no-force-push" in telemetry.body  # never matched
    health = ui.get("/health")
    assert health.status == 200 and "doctor: ok" in health.body
    indexes = sorted(p.name for p in (store_dir / ".git" / "xbrain").glob("*.sqlite"))
    assert indexes and all(f"<th>{name}</th>" in health.body for name in indexes)
    assert "No remote: nothing is backed up" in health.body
    assert "references/rollback.md" in skill.body  # its components
    component = ui.get(f"/skill/deploy-check/file?rev={ids['rev1']}&path=references/rollback.md")
    assert component.status == 200 and "<code>migrate down 1</code>" in component.body


def test_search_finds_every_kind_with_why_in_english_and_chinese(
    ui: Running, ids: dict[str, str]
) -> None:
    english = ui.get("/search?q=" + quote("git push force to main"))
    assert english.status == 200 and f"/entry/{ids['rule']}" in english.body
    assert "why: query" in english.body  # recall's why: the entry's query that matched
    chinese = ui.get("/search?q=" + quote("部署窗口"))
    assert f"/entry/{ids['memory_zh']}" in chinese.body
    checklist = ui.get("/search?q=" + quote("部署前检查清单"))
    assert "/skill/deploy-check" in checklist.body  # a skill, as recall points to it
    assert f"/resource/{ids['resource_zh']}" in chinese.body  # a resource, as search finds
    only = ui.get("/search?what=resources&mode=lexical&q=" + quote("keyboard dialogs"))
    assert f"/resource/{ids['resource']}" in only.body and "/entry/" not in only.body
    bad = ui.get("/search?q=x&mode=psychic")
    assert bad.status == 400 and "Unknown search mode" in bad.body


def test_a_search_in_the_viewer_is_not_telemetry(
    ui: Running, xb_proc: Run, ids: dict[str, str]
) -> None:
    """The viewer's search runs recall, which records what it showed; a look in the
    viewer is not an agent being given an entry, so nothing is recorded."""
    assert ui.get("/search?q=" + quote("git push force to main")).status == 200
    assert xb_proc("telemetry").json.get("entries") == []
    assert xb_proc("recall", input="git push force to main").code == 0  # an agent's recall
    assert [e["id"] for e in xb_proc("telemetry").json["entries"]] == [ids["rule"]]


def test_two_revisions_side_by_side_keep_chinese_words_whole(ui: Running) -> None:
    diff = ui.get("/skill/deploy-check/diff")
    assert diff.status == 200
    assert "<del>检查</del>" in diff.body and "<ins>确认</ins>" in diff.body
    assert "<del>是否可以</del>" in diff.body and "<ins>能够</ins>" in diff.body


def test_retire_is_one_commit_by_agent_ui_and_leaves_recall(
    ui: Running, xb_proc: Run, store_dir: Path, ids: dict[str, str]
) -> None:
    before = head(store_dir)
    token = ui.csrf(f"/entry/{ids['rule']}")
    done = ui.post(
        {
            "csrf": token,
            "action": "entry-retire",
            "id": ids["rule"],
            "back": f"/entry/{ids['rule']}",
        }
    )
    assert done.status == 303 and done.headers["location"].startswith(f"/{ui.token}/entry/")
    assert xb_proc("entry", "get", ids["rule"]).json["status"] == "retired"
    log = xb_proc("log", "--limit", "2").json["commits"]
    assert log[0]["agent"] == "ui" and log[0]["command"] == "entry retire"
    assert log[0]["parents"] == [before]  # exactly one commit
    page = ui.get(f"/entry/{ids['rule']}")
    assert 'id="status">retired' in page.body
    found = ui.get("/search?q=" + quote("git push force to main"))
    assert f"/entry/{ids['rule']}" not in found.body
    assert xb_proc("recall", input="git push force to main").json["results"] == []
    again = ui.get("/search?retired=on&q=" + quote("git push force to main"))
    assert f"/entry/{ids['rule']}" in again.body
    activate = ui.post({"csrf": token, "action": "entry-activate", "id": ids["rule"]})
    assert activate.status == 303
    assert xb_proc("entry", "get", ids["rule"]).json["status"] == "active"


def test_skill_lifecycle_and_delete_are_the_cli_operations(
    ui: Running, xb_proc: Run, store_dir: Path, ids: dict[str, str]
) -> None:
    token = ui.csrf("/skill/deploy-check")
    fields = {"csrf": token, "slug": "deploy-check", "back": "/skill/deploy-check"}
    assert ui.post({**fields, "action": "skill-publish", "rev": ids["rev2"]}).status == 303
    listed = xb_proc("skill", "list").json["skills"][0]
    assert listed["published"] == ids["rev2"]
    assert ui.post({**fields, "action": "skill-archive"}).status == 303
    assert xb_proc("skill", "list").json["skills"][0]["status"] == "archived"
    assert (
        ui.post({"csrf": token, "action": "resource-delete", "id": ids["resource"]}).status == 303
    )
    gone = xb_proc("get", ids["resource"])
    assert gone.code == 3
    commands = [c["command"] for c in xb_proc("log", "--limit", "3").json["commits"]]
    assert commands == ["delete", "skill archive", "skill publish"]
    assert {c["agent"] for c in xb_proc("log", "--limit", "3").json["commits"]} == {"ui"}
    missing = ui.get(f"/resource/{ids['resource']}")
    assert missing.status == 404 and "deleted" in missing.body


def test_a_refused_action_is_the_cli_message_and_changes_nothing(
    ui: Running, store_dir: Path, ids: dict[str, str]
) -> None:
    before = head(store_dir)
    token = ui.csrf()
    missing = ui.post({"csrf": token, "action": "entry-retire", "id": "entry_" + "0" * 64})
    assert missing.status == 404 and 'role="alert"' in missing.body
    wrong = ui.post(
        {"csrf": token, "action": "skill-publish", "slug": "deploy-check", "rev": "rev_nope"}
    )
    assert wrong.status in (400, 404) and 'role="alert"' in wrong.body
    unknown = ui.post({"csrf": token, "action": "rm-rf"})
    assert unknown.status == 400 and "Unknown action" in unknown.body
    no_reason = ui.post({"csrf": token, "action": "review-reject", "id": ids["rule"]})
    assert no_reason.status == 400 and "needs reason" in no_reason.body
    assert head(store_dir) == before


def test_the_review_queue_accepts_and_rejects(
    ui: Running, xb_proc: Run, store_dir: Path, ids: dict[str, str]
) -> None:
    from xbrain.store import Store

    proposed = Store(store_dir).entry_put(
        [
            {"kind": "rule", "name": "tabs", "description": "Indent with tabs", "body": "Tabs."},
            {"kind": "rule", "name": "spaces", "description": "Indent with spaces", "body": "."},
        ],
        propose={"agent": "claude"},
    )
    tabs, spaces = (item["id"] for item in proposed["results"])
    queue = ui.get("/review")
    assert "proposed by agent claude" in queue.body and f"/entry/{tabs}" in queue.body
    token = ui.csrf("/review")
    assert ui.post({"csrf": token, "action": "review-accept", "id": tabs}).status == 303
    rejected = ui.post(
        {"csrf": token, "action": "review-reject", "id": spaces, "reason": "we use tabs"}
    )
    assert rejected.status == 303
    assert xb_proc("entry", "get", tabs).json["status"] == "active"
    assert xb_proc("entry", "get", spaces).code == 3  # a tombstone that says why
    assert xb_proc("review").json["count"] == 0
    commands = [c["command"] for c in xb_proc("log", "--limit", "2").json["commits"]]
    assert commands == ["review reject", "review accept"]


def test_health_says_when_main_was_last_pushed(
    ui: Running, xb_proc: Run, tmp_path: Path, ids: dict[str, str]
) -> None:
    assert xb_proc("remote", "add", "backup", str(tmp_path / "backup.git")).code == 0
    assert "never pushed" in ui.get("/health").body
    assert xb_proc("remote", "push", "backup").code == 0
    health = ui.get("/health").body
    assert "last pushed 20" in health and "up to date" in health
    token = ui.csrf()
    assert ui.post({"csrf": token, "action": "entry-retire", "id": ids["rule"]}).status == 303
    assert "behind main" in ui.get("/health").body


def test_idle_exit(store_dir: Path, ids: dict[str, str]) -> None:
    running = start(store_dir, "--idle", "1")
    out, _ = running.proc.communicate(timeout=60)
    code = running.proc.returncode
    assert code == 0 and json.loads(out)["stopped"] == "idle"


def test_ctrl_c_stops_it(store_dir: Path, ids: dict[str, str]) -> None:
    running = start(store_dir)
    assert running.get("/").status == 200
    code, out, err = running.stop()
    assert code == 130 and err.strip().endswith("Interrupted.") and out == ""


@pytest.mark.parametrize("delay", [0.0, 0.02, 0.1])
def test_ctrl_c_right_after_the_url_stops_it(
    store_dir: Path, ids: dict[str, str], delay: float
) -> None:
    """Ctrl-C while the viewer still loads its server (the URL is printed first): a
    KeyboardInterrupt raised inside an import's lock callback was printed as ignored and
    the viewer served on until --idle."""
    running = start(store_dir, "--idle", "120")
    time.sleep(delay)
    running.proc.send_signal(signal.SIGINT)
    out, err = running.proc.communicate(timeout=60)
    assert running.proc.returncode == 130, err
    assert err.strip().endswith("Interrupted.") and out == ""
    assert "ignored" not in err


@pytest.mark.parametrize("handler", [signal.default_int_handler, signal.SIG_DFL])
def test_ctrl_c_as_the_url_is_printed_is_noted_not_raised_there(
    store_dir: Path, ids: dict[str, str], handler: Any
) -> None:
    """A Ctrl-C that comes while the URL is printed (here: raised by the callback that
    prints it) stops the viewer once it has closed its socket, before it serves a
    request, and leaves the process's own Ctrl-C handling as it found it."""
    import threading

    from xbrain.store import Store
    from xbrain.ui import serve

    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signal handlers are set in the main thread only")
    # Ctrl-C as at a terminal (a suite started as a shell's background job ignores it)
    inherited = signal.signal(signal.SIGINT, handler)
    printed: list[str] = []

    def ready(url: str) -> None:
        printed.append(url)
        signal.raise_signal(signal.SIGINT)
        printed.append("printed")

    try:
        with pytest.raises(KeyboardInterrupt):
            serve(Store(store_dir), idle=60, ready=ready)
        after = signal.getsignal(signal.SIGINT)
    finally:
        signal.signal(signal.SIGINT, inherited)
    assert printed[1:] == ["printed"] and after == handler  # SIG_DFL too (it is 0)
    port = int(printed[0].split(":")[2].split("/")[0])
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=5).close()


def browsed(opened: Path) -> str:
    """What the stand-in browser wrote to ``opened`` (the URL it was given), once it has."""
    for _ in range(600):
        if opened.exists() and opened.read_text():
            break
        time.sleep(0.05)
    return opened.read_text()


def test_open_hands_the_url_to_the_browser(
    store_dir: Path, ids: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened = tmp_path / "opened.txt"
    monkeypatch.setenv("BROWSER", f"sh -c 'printf %s > {opened}'")
    running = start(store_dir, "--open")
    try:
        assert browsed(opened) == running.url
    finally:
        running.stop()


def test_a_browser_that_waits_does_not_hold_the_viewer(
    store_dir: Path, ids: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A browser ``webbrowser`` waits for (a text one, here a command that sleeps) was
    opened before the server ran: the page it asked for had no answer, and Ctrl-C waited
    for the browser to quit."""
    opened, browser = tmp_path / "opened.txt", tmp_path / "browser.pid"
    monkeypatch.setenv(
        "BROWSER", f"sh -c 'echo $$ > {browser}; printf %s > {opened}; exec sleep 30'"
    )
    running = start(store_dir, "--open")
    try:
        assert browsed(opened) == running.url
        asked = time.monotonic()
        assert running.get("/").status == 200
        assert time.monotonic() - asked < 10
        running.proc.send_signal(signal.SIGINT)
        # (its output is not read to the end: the browser holds the same pipes)
        assert running.proc.wait(timeout=10) == 130
    finally:
        running.proc.kill()
        with contextlib.suppress(OSError, ValueError):
            os.kill(int(browser.read_text()), signal.SIGKILL)
        running.proc.communicate()


def test_a_viewer_started_with_ctrl_c_ignored_still_stops_on_sigint_once_serving(
    store_dir: Path, ids: dict[str, str]
) -> None:
    """A background job of a script starts with SIGINT ignored: the viewer leaves that
    as it is until its server runs, which stops on SIGINT and says how it stopped."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "xbrain", "ui", "--store", str(store_dir), "--idle", "120"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        port, token = url.split(":")[2].split("/")[:2]
        running = Running(proc, url, int(port), token)
        assert running.get("/").status == 200
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
        assert proc.returncode == 0, err
        assert json.loads(out)["stopped"] == "interrupted"
    finally:
        proc.kill()
        proc.communicate()


def test_a_port_in_use_is_one_line(xb_proc: Run, ids: dict[str, str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        result = xb_proc("ui", "--port", str(port))
    assert result.code == 1 and result.stdout == ""
    assert result.stderr.startswith(f"Cannot listen on 127.0.0.1:{port}")
    assert len(result.stderr.strip().splitlines()) == 1


def test_without_the_extra_it_says_what_to_install(
    xb: Run, ids: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import xbrain.ui

    monkeypatch.setattr(xbrain.ui, "_NEEDS", (*xbrain.ui._NEEDS, "no_such_web_framework"))
    result = xb("ui")
    assert result.code == 1 and result.stdout == ""
    assert result.stderr.strip() == (
        "The viewer needs its optional packages: pip install 'xbrain[ui]'."
    )


def test_no_store_is_said(xb_proc: Run, tmp_path: Path) -> None:
    result = xb_proc("ui", store=tmp_path / "none")
    assert result.code == 3 and "No store" in result.stderr and result.stdout == ""


def test_the_base_install_does_not_load_the_web_framework(
    xb_proc: Run, store_dir: Path, ids: dict[str, str]
) -> None:
    """Commands other than ``xbrain ui`` import none of its packages (they are the
    ``xbrain[ui]`` extra's)."""
    probe = (
        "import sys, runpy\n"
        "sys.argv = ['xbrain', *sys.argv[1:]]\n"
        "try:\n"
        "    runpy.run_module('xbrain', run_name='__main__')\n"
        "except SystemExit:\n"
        "    pass\n"
        "web = ('starlette', 'uvicorn', 'jinja2', 'nh3', 'markdown_it', 'xbrain.ui', 'anyio')\n"
        "print(sorted(m for m in sys.modules if m.startswith(web)), file=sys.stderr)\n"
    )
    for args in (["--help"], ["status"], ["entry", "list"], ["log"], ["skill", "list"]):
        proc = subprocess.run(
            [sys.executable, "-c", probe, *args, "--store", str(store_dir)]
            if args != ["--help"]
            else [sys.executable, "-c", probe, *args],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.stderr.strip().splitlines()[-1] == "[]", (args, proc.stderr)


def test_hidden_characters_in_a_body_are_shown_as_marks(
    store_dir: Path, ids: dict[str, str]
) -> None:
    """A bidi override or a zero-width space kept in an entry's body (bodies keep them) is
    shown to the person reviewing it as a mark, in the rendered Markdown and in plain
    fields alike, never as the invisible character that reorders what they read."""
    from xbrain.store import Store

    body = "Run `rm -rf build`\u202e and never /tmp\u200b/cache."
    put = Store(store_dir).entry_put(
        [{"kind": "memory", "name": "trojan", "description": "Build cleanup", "body": body}]
    )
    running = start(store_dir, "--idle", "300")
    try:
        page = running.get(f"/entry/{put['results'][0]['id']}")
    finally:
        running.stop()
    assert page.status == 200
    assert "&lt;U+202E&gt;" in page.body and "&lt;U+200B&gt;" in page.body
    assert "\u202e" not in page.body and "\u200b" not in page.body
