"""Team memory over every transport (issue 47): a plain path, file://, git:// (dulwich's
daemon) and smart HTTP (dulwich's HTTP server), both on 127.0.0.1. Two members share,
review and recall through one team repository; a revision the reviewer shares later
reaches the other member's agent after its next automatic pull."""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.cli.test_team_share import Member, records, team_remote, tree
from tests.cli.test_team_sync import bare_main, eventually
from tests.conftest import Result, head, make
from xbrain.kinds.entry import entry_id

Run = Callable[..., Result]
needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="no git binary")
NOTE = entry_id("global", "release-checklist")


@contextlib.contextmanager
def served(bare: Path, transport: str) -> Iterator[str]:
    """The URL the members use for ``bare`` over ``transport``."""
    if transport == "path":
        yield str(bare)
        return
    if transport == "file":
        yield bare.as_uri()
        return
    from dulwich.repo import Repo
    from dulwich.server import DictBackend

    repo = Repo(str(bare))
    backend = DictBackend({b"/": repo})
    if transport == "git":
        from dulwich.server import TCPGitServer

        server: object = TCPGitServer(backend, "127.0.0.1", 0)
        url = f"git://127.0.0.1:{server.server_address[1]}/"  # type: ignore[attr-defined]
    else:
        from wsgiref.simple_server import make_server

        from dulwich.web import WSGIRequestHandlerLogger, WSGIServerLogger, make_wsgi_chain

        server = make_server(
            "127.0.0.1",
            0,
            make_wsgi_chain(backend),
            server_class=WSGIServerLogger,
            handler_class=WSGIRequestHandlerLogger,
        )
        url = f"http://127.0.0.1:{server.server_address[1]}/"  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)  # type: ignore[attr-defined]
    thread.start()
    try:
        yield url
    finally:
        server.shutdown()  # type: ignore[attr-defined]
        server.server_close()  # type: ignore[attr-defined]
        repo.close()


def rule(body: str) -> list[dict[str, object]]:
    return [
        {
            "kind": "rule",
            "name": "release-checklist",
            "description": "Before a release: run the release checklist",
            "queries": ["how do I cut a release", "release checklist"],
            "body": body,
            "oneLiner": "Run the release checklist.",
        }
    ]


def prompt_hook(member: Member, text: str, session: str) -> str:
    payload = {"hook_event_name": "UserPromptSubmit", "prompt": text, "session_id": session}
    ran = member("hook", "claude-code", input=json.dumps(payload), store=False)
    assert ran.code == 0, ran.stderr
    if not ran.stdout.strip():
        return ""
    return str(json.loads(ran.stdout)["hookSpecificOutput"]["additionalContext"])


def session_start(member: Member) -> None:
    payload = {"hook_event_name": "SessionStart", "session_id": "start"}
    assert member("hook", "claude-code", input=json.dumps(payload), store=False).code == 0


@needs_git
@pytest.mark.parametrize("transport", ["path", "file", "git", "http"])
def test_two_members_share_review_and_recall(xb_proc: Run, tmp_path: Path, transport: str) -> None:
    bare, _ = team_remote(xb_proc, tmp_path)
    with served(bare, transport) as url:
        two_members(xb_proc, tmp_path, bare, url)


def two_members(xb_proc: Run, tmp_path: Path, bare: Path, url: str) -> None:
    """share → accept → the other member's automatic pull → hook payload → a newer
    revision after the next pull; real git finds nothing private in ``bare``."""
    ann = Member(xb_proc, tmp_path / "ann", "ann")
    rita = Member(xb_proc, tmp_path / "rita", "rita")
    ann.ok("init")
    ann.ok("team", "add", "eng", url, store=False)
    ann.ok("config", "sync.auto", "on")
    rita.ok("entry", "put", "-", input=json.dumps(rule("Tag, build, then sign.")))
    private = make("rita-private", title="Rita's private notes on releases")
    (tmp_path / "private.json").write_text(json.dumps(private))
    rita.ok("put", str(tmp_path / "private.json"))
    rita.ok("team", "add", "eng", url, store=False)
    assert rita.ok("share", NOTE, "--team", "eng")["pushed"]
    assert rita.ok("team", "review", "eng", "accept", NOTE)["pushed"]

    clone = tmp_path / "ann" / "data" / "xbrain" / "teams" / "eng"
    assert "Tag, build" not in prompt_hook(ann, "how do I cut a release?", "a1")
    session_start(ann)  # sync.auto: the team is pulled in the background
    eventually(lambda: head(clone) == bare_main(bare), "ann's automatic pull")
    assert "Tag, build, then sign." in prompt_hook(ann, "how do I cut a release?", "a2")

    mine = make("ann-shared", title="Ann's shared release dashboard")
    (tmp_path / "mine.json").write_text(json.dumps(mine))
    shared = ann.ok("put", str(tmp_path / "mine.json"))["results"][0]["id"]
    assert ann.ok("share", shared, "--team", "eng")["pushed"]
    assert rita.ok("team", "review", "eng", "accept", shared)["pushed"]
    found = rita.ok("search", "shared release dashboard")["results"]
    assert [(r["citation"]["id"], r["layer"]) for r in found][:1] == [(shared, "team:eng")]

    # a newer revision of the rule: shared, accepted, and the other member's agent
    # reads it after its next automatic pull
    rita.ok("entry", "put", "-", input=json.dumps(rule("Tag, build, sign, then announce.")))
    rita.ok("share", NOTE, "--team", "eng")
    rita.ok("team", "review", "eng", "accept", NOTE)
    session_start(ann)
    eventually(lambda: head(clone) == bare_main(bare), "ann's second automatic pull")
    assert "then announce." in prompt_hook(ann, "how do I cut a release?", "a3")

    paths = tree(bare)
    assert records(paths, "entries") == {NOTE}
    assert shared in records(paths, "resources")
    private_id = subprocess.run(
        ["git", "--git-dir", str(bare), "grep", "-c", "Rita's private notes", "main"],
        capture_output=True,
        text=True,
    )
    assert private_id.returncode == 1  # nothing private in the team repository
