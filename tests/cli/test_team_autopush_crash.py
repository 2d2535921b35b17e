"""The automatic push killed mid-push (issue 47, "SIGKILL mid-push: the next sync
completes, nothing duplicated"). The remote is dulwich's smart-HTTP server behind a
gate that holds a push at one point, so the background pusher is killed exactly there:
before its pack is sent (the ref advertisement), after the pack is sent but before the
remote applies it, and after the remote applied it but before the pusher heard back
(so before it records anything locally). The next automatic push completes; the
remote holds each record once, real ``git fsck --strict`` is clean on both sides, and
``status`` says the sync is done."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cli.test_team_share import Member, records, team_remote, tree
from tests.cli.test_team_sync import bare_main, eventually, new_bare
from tests.conftest import Result, head, make
from xbrain.team.syncstate import read_sync

Run = Callable[..., Result]
needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="no git binary")
FAST = {"XBRAIN_SYNC_DEBOUNCE": "0.2"}
POINTS = ["before-pack", "pack-sent", "applied"]


class Gate:
    """A WSGI app in front of dulwich's: holds the next push at ``point`` until released
    (``pack-sent``: the pack is then thrown away, never applied)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.point: str | None = None
        self.refuse = False
        self.reached = threading.Event()
        self.released = threading.Event()

    def hold(self) -> None:
        self.reached.set()
        self.released.wait(120)

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        pushing = environ["PATH_INFO"].endswith("git-receive-pack")
        advertising = "service=git-receive-pack" in environ.get("QUERY_STRING", "")
        if self.refuse and (pushing or advertising):
            start_response("503 Service Unavailable", [("Content-Type", "text/plain")])
            return [b"down for maintenance\n"]
        if advertising and self.point == "before-pack":
            self.hold()
        if pushing and self.point == "pack-sent":
            self.hold()
            start_response("500 Internal Server Error", [("Content-Type", "text/plain")])
            return [b"dropped\n"]
        if pushing and self.point == "applied":
            answer = list(self.app(environ, start_response))  # the ref has moved
            self.hold()
            return answer
        return self.app(environ, start_response)


@contextlib.contextmanager
def gated(bare: Path) -> Iterator[tuple[str, Gate]]:
    from wsgiref.simple_server import make_server

    from dulwich.repo import Repo
    from dulwich.server import DictBackend
    from dulwich.web import WSGIRequestHandlerLogger, WSGIServerLogger, make_wsgi_chain

    repo = Repo(str(bare))
    gate = Gate(make_wsgi_chain(DictBackend({b"/": repo})))
    server = make_server(
        "127.0.0.1",
        0,
        gate,
        server_class=WSGIServerLogger,
        handler_class=WSGIRequestHandlerLogger,
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/", gate
    finally:
        gate.released.set()
        server.shutdown()
        server.server_close()
        repo.close()


def kill_pusher(store: Path, gate: Gate) -> None:
    """SIGKILL the background pusher, held by ``gate`` (its pid is in its token)."""
    assert gate.reached.wait(120), "the automatic push never reached the gate"
    token = (store / ".git" / "xbrain" / "sync-push.token").read_text().split()
    os.kill(int(token[0]), signal.SIGKILL)
    eventually(lambda: not Path(f"/proc/{token[0]}").exists() or zombie(token[0]), "killed")
    gate.point, gate.reached = None, threading.Event()
    gate.released.set()


def zombie(pid: str) -> bool:
    try:
        return " Z " in Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True


def fsck(git_dir: Path) -> None:
    ran = subprocess.run(
        ["git", "--git-dir", str(git_dir), "fsck", "--strict", "--no-dangling"],
        capture_output=True,
        text=True,
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr


def put(member: Member, tmp_path: Path, name: str) -> str:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(make(name, title=f"Note {name} about releases")))
    ran = member.run_cli("put", str(path), store=member.store, env={**member.env, **FAST})
    assert ran.code == 0, ran.stderr
    return str(ran.json["results"][0]["id"])


@needs_git
@pytest.mark.parametrize("point", POINTS)
def test_the_automatic_push_killed_mid_push_is_completed_by_the_next_once(
    xb_proc: Run, tmp_path: Path, point: str
) -> None:
    bare = new_bare(tmp_path, "origin.git")
    with gated(bare) as (url, gate):
        ann = Member(xb_proc, tmp_path / "ann", "ann")
        ann.ok("init")
        ann.ok("remote", "add", "origin", url)
        ann.ok("remote", "push")
        ann.ok("config", "sync.auto", "on")
        gate.point = point
        first = put(ann, tmp_path, "first")
        kill_pusher(ann.store, gate)
        assert (bare_main(bare) == head(ann.store)) == (point == "applied")

        second = put(ann, tmp_path, "second")  # the next automatic push
        eventually(lambda: bare_main(bare) == head(ann.store), "the next push")
        eventually(lambda: read_sync(ann.store).get("ahead") is False, "the sync noted")
        sync = ann.ok("status")["sync"]["store"]
        assert sync["lastError"] is None and sync["lastSync"]
        assert (sync["ahead"], sync["behind"]) == (0, 0)
    paths = tree(bare)
    assert sorted(records(paths, "resources")) == sorted([first, second])
    assert len(paths) == len(set(paths))
    log = subprocess.run(
        ["git", "--git-dir", str(bare), "log", "--format=%H %P", "main"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert all(len(line.split()) == 2 for line in log[:-1])  # no merge: nothing twice
    fsck(bare)
    fsck(ann.store / ".git")


@needs_git
def test_a_team_push_the_automatic_push_resumes_killed_mid_push(
    xb_proc: Run, tmp_path: Path
) -> None:
    """A share the team host refused is pushed by the next automatic push; killed after
    the host applied it, the one after completes it, with the proposal there once."""
    bare, _ = team_remote(xb_proc, tmp_path)
    with gated(bare) as (url, gate):
        ann = Member(xb_proc, tmp_path / "ann", "ann")
        ann.ok("init")
        ann.ok("team", "add", "eng", url, store=False)
        ann.ok("config", "sync.auto", "on")
        shared = put(ann, tmp_path, "shared")
        gate.refuse = True
        refused = ann("share", shared, "--team", "eng")
        assert refused.code == 8 and refused.json["pushed"] is False  # shared, not pushed
        clone = tmp_path / "ann" / "data" / "xbrain" / "teams" / "eng"
        assert read_sync(clone).get("ahead") is True
        gate.refuse, gate.point = False, "applied"
        put(ann, tmp_path, "private-one")
        kill_pusher(ann.store, gate)
        assert bare_main(bare) == head(clone)  # the host has it; ann never heard

        put(ann, tmp_path, "private-two")  # the next automatic push
        eventually(lambda: read_sync(clone).get("ahead") is False, "the team pushed")
        assert bare_main(bare) == head(clone)
        teams = ann.ok("status")["sync"]["teams"]
        assert teams[0]["lastError"] is None and (teams[0]["ahead"], teams[0]["behind"]) == (0, 0)
    paths = tree(bare)
    assert records(paths, "proposals") == {shared}
    assert sum(p.endswith(f"/{shared}.yaml") for p in paths) == 2  # record and proposal
    assert not {p for p in paths if "private" in p}
    fsck(bare)
    fsck(clone / ".git")
