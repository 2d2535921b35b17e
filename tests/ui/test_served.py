"""``xbrain ui`` shares ``xbrain serve``'s warm state: when a server answers for the
store, the viewer's search and recall go through it (the CLI's served path: its warm
indexes and, with semantic recall on, its model); when none answers, the viewer runs
the same functions itself. Both give the same answers, and the health page says which
path answered."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

from tests.conftest import Result
from tests.ui.server import Running, seed, start

pytest.importorskip("starlette", reason="the viewer's extra (xbrain[ui]) is not installed")
pytestmark = pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="Unix sockets only")

Run = Callable[..., Result]
QUERIES = ("git push force to main", "部署窗口", "keyboard focus dialogs", "部署前检查清单")


@pytest.fixture
def runtime(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A short private runtime dir (a socket's path is limited to ~100 bytes), for the
    server and the viewer alike."""
    folder = Path(tempfile.mkdtemp(prefix="xbr"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(folder))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def ids(store_dir: Path, xb: Run) -> dict[str, str]:
    found = seed(store_dir)
    assert xb("reindex", "--semantic", "--provider", "hashing").code == 0  # semantic on
    return found


@pytest.fixture
def ui(store_dir: Path, ids: dict[str, str], runtime: Path) -> Iterator[Running]:
    running = start(store_dir, "--idle", "300")
    yield running
    running.stop()


def serve(store_dir: Path) -> subprocess.Popen[str]:
    server = subprocess.Popen(
        [sys.executable, "-m", "xbrain", "serve", "--store", str(store_dir)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ),
    )
    assert server.stderr is not None
    line = server.stderr.readline()  # "listening on …" once the socket accepts
    assert "listening on" in line, line + server.stderr.read()
    return server


def stop(server: subprocess.Popen[str]) -> None:
    server.terminate()
    server.communicate(timeout=60)


def results(body: str) -> tuple[str, str]:
    """The page's two result lists (recall's, search's) as HTML."""
    found = [
        m.group(0) if m else ""
        for m in (
            re.search(r'<ol class="results" id="recalled">.*?</ol>', body, re.S),
            re.search(r'<ol class="results" id="resources">.*?</ol>', body, re.S),
        )
    ]
    return found[0], found[1]


def answered(body: str) -> str:
    found = re.search(r'id="answered" data-path="(\w*)"', body)
    assert found is not None, body[:2000]
    return found.group(1)


def test_a_running_server_answers_the_viewer_s_searches_and_the_answers_are_equal(
    ui: Running, store_dir: Path, xb_proc: Run
) -> None:
    pages = {}
    for mode in ("", "semantic", "lexical"):
        for query in QUERIES:
            page = ui.get(f"/search?mode={mode}&q=" + quote(query))
            assert page.status == 200 and answered(page.body) == "viewer"
            pages[mode, query] = results(page.body)
    health = ui.get("/health").body
    assert "No xbrain serve answers for this store" in health
    assert 'data-path="viewer"' in health

    server = serve(store_dir)
    try:
        pid = server.pid
        for (mode, query), before in pages.items():
            page = ui.get(f"/search?mode={mode}&q=" + quote(query))
            assert page.status == 200 and answered(page.body) == "serve", (mode, query)
            assert results(page.body) == before, (mode, query)
        assert any(before[0].count("<li") for before in pages.values())  # not all empty
        health = ui.get("/health").body
        assert f"xbrain serve answers for this store (process {pid})" in health
        assert 'data-path="serve"' in health
        assert xb_proc("telemetry").json.get("entries") == []  # a look, through it too
    finally:
        stop(server)
    page = ui.get("/search?q=" + quote(QUERIES[0]))
    assert answered(page.body) == "viewer" and results(page.body) == pages["", QUERIES[0]]


def test_a_refused_search_is_the_same_line_on_both_paths(ui: Running, store_dir: Path) -> None:
    path = "/search?what=resources&q=" + quote("x" * 3000)  # over search's 2,000 characters
    alone = ui.get(path)
    server = serve(store_dir)
    try:
        served = ui.get(path)
    finally:
        stop(server)
    for page in (alone, served):
        assert page.status == 400 and "max 2,000 characters" in page.body
    line = re.compile(r'<p class="error" role="alert">.*?</p>', re.S)
    assert line.findall(alone.body) == line.findall(served.body) != []
