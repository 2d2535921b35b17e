"""``xbrain serve`` keeps its indexes open between requests (``search/kept.py``), and
still never answers from anything but ``main``."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.cli.test_serve import cli, finished, runtime, start, stocked  # noqa: F401
from tests.conftest import make

Run = Callable[..., Any]


def _ids(answer: str) -> list[str]:
    return [r["citation"]["id"] for r in json.loads(answer)["results"]]


def test_the_server_keeps_its_indexes_open_and_still_sees_every_commit(
    xb: Run,
    stocked: Path,  # noqa: F811
    runtime: Path,  # noqa: F811
    json_file: Callable[[Any], str],
) -> None:
    """Each served request opened the search and skill indexes and closed them again:
    SQLite's page cache went with every close (the same pages read again on the next
    prompt), and closing the last connection checkpointed and removed the WAL files the
    next request made anew (about half of a served hook's time on 10,000 resources). The
    server keeps one read connection per index now, so its files stay between requests;
    a new commit (the index updated in place) and a rebuild (a new index file) are seen
    by the next request all the same, as a fresh process sees them."""
    from xbrain.kinds.model import resource_id

    control = stocked / ".git" / "xbrain"
    query = "keyboard dialog"
    server = start(runtime, stocked)
    try:
        first = cli(runtime, stocked, "search", query)
        assert first.returncode == 0 and _ids(first.stdout), first.stderr
        assert (control / "search.sqlite-shm").exists()  # kept open between requests

        note = make("warm", title="Keyboard dialog shortcuts", text="keyboard dialog focus")
        assert xb("put", json_file(note)).code == 0  # a commit: the index updated in place
        after = cli(runtime, stocked, "search", query)
        assert resource_id("web", "warm") in _ids(after.stdout)

        assert xb("reindex").code == 0  # a new index file
        rebuilt = cli(runtime, stocked, "search", query)
        alone = cli(runtime, stocked, "search", query, env={"XDG_RUNTIME_DIR": str(stocked)})
        assert rebuilt.stdout == alone.stdout  # the same answer as a fresh process
        assert resource_id("web", "warm") in _ids(rebuilt.stdout)
        assert json.loads(cli(runtime, stocked, "serve", "--stop").stdout)["stopped"] is True
        summary = finished(server)
    finally:
        server.kill()
        server.communicate()
    assert summary["served"] == 4  # every search went through it (and the stop)
