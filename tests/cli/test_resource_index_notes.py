"""The resource search index is written only by commits that change a resource, like the
skill index and the entry cache (issue 45): a `skill save` (or an entry put) notes that
it still holds instead of an SQLite write transaction and a checkpoint, and every
reader still answers only for the commit `main` names."""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EXAMPLES, Result, head, make
from xbrain.search import freshness
from xbrain.search.query import current as fast_search
from xbrain.search.tokenize import Tokenizer

SKILL = EXAMPLES / "skills" / "deploy-check"


def index_of(store: Path) -> Path:
    return store / ".git/xbrain/search.sqlite"


def contents(path: Path) -> dict[str, bytes]:
    """The database's bytes with its WAL's frames (what any write changes; a reader may
    leave an empty WAL behind)."""
    found = {}
    for suffix in ("", "-wal"):
        with contextlib.suppress(FileNotFoundError):
            data = path.with_name(path.name + suffix).read_bytes()
            if data:
                found[suffix] = data
    return found


def recorded(path: Path) -> str:
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        (commit,) = conn.execute("SELECT value FROM meta WHERE key = 'commit'").fetchone()
    return str(commit)


def answered(store: Path, query: str, tmp_path: Path) -> list[str] | None:
    """The ids the search fast path answers for ``main`` right now (None: it cannot)."""
    tokenizer = Tokenizer(tmp_path / "cache")
    try:
        found = fast_search(
            store / ".git", tokenizer, tokenizer.query_terms(query), 5, None, None, None
        )
    finally:
        tokenizer.close()
    return None if found is None else [hit["resource"]["id"] for hit in found["results"]]


@pytest.fixture
def searched_store(
    xb_proc: Callable[..., Result], store_dir: Path, json_file: Callable[[Any], str]
) -> Path:
    """A store with resources and its search index built by a search."""
    items = [make(f"note-{i}", title=f"Keyboard focus note {i}") for i in range(3)]
    assert xb_proc("put", json_file(items)).code == 0
    assert xb_proc("search", "keyboard focus").code == 0
    assert recorded(index_of(store_dir)) == head(store_dir)
    return store_dir


def test_a_skill_save_writes_nothing_to_the_resource_index(
    searched_store: Path, xb_proc: Callable[..., Result], tmp_path: Path
) -> None:
    """Before: the save's hook opened the index, moved its recorded commit in a write
    transaction and checkpointed it on close (two syncs)."""
    index = index_of(searched_store)
    before, was = contents(index), head(searched_store)
    hits = answered(searched_store, "keyboard focus", tmp_path)
    assert hits is not None and len(hits) == 3
    assert xb_proc("skill", "save", str(SKILL)).code == 0
    assert head(searched_store) != was
    assert contents(index) == before and recorded(index) == was
    assert answered(searched_store, "keyboard focus", tmp_path) == hits  # for the new main
    searched = xb_proc("search", "keyboard focus").json
    assert sorted(r["resource"]["id"] for r in searched["results"]) == sorted(hits)
    assert contents(index) == before  # the search answered from it as it is


def test_a_put_after_a_skill_save_updates_the_index_in_place(
    searched_store: Path,
    xb_proc: Callable[..., Result],
    json_file: Callable[[Any], str],
    tmp_path: Path,
) -> None:
    """The put's hook takes the note as the index reflecting its parent: it adds the new
    resource and records the put's commit (no rebuild, no catching up from git)."""
    assert xb_proc("skill", "save", str(SKILL)).code == 0
    added = xb_proc("put", json_file(make("note-new", title="Keyboard focus latecomer")))
    assert added.code == 0
    assert recorded(index_of(searched_store)) == head(searched_store)
    hits = answered(searched_store, "latecomer", tmp_path)
    assert hits == [added.json["results"][0]["id"]]


def test_the_resource_index_never_answers_for_a_commit_it_was_not_told_of(
    searched_store: Path, xb_proc: Callable[..., Result], tmp_path: Path
) -> None:
    """A commit no hook saw (git by hand) gets no note: the fast path steps aside and a
    search answers from git as before; a note for another pair counts for nothing."""
    if shutil.which("git") is None:
        pytest.skip("the git binary is not installed (make test installs it)")
    assert xb_proc("skill", "save", str(SKILL)).code == 0
    index = index_of(searched_store)
    who = ["-c", "user.name=t", "-c", "user.email=t@x.invalid"]
    subprocess.run(
        ["git", "-C", str(searched_store), *who, "commit", "-q", "--allow-empty", "-m", "hand"],
        check=True,
    )
    assert answered(searched_store, "keyboard focus", tmp_path) is None
    old = recorded(index)
    freshness.note_path(index).write_text(f"{old} {'0' * 40}\n")
    assert answered(searched_store, "keyboard focus", tmp_path) is None
    searched = xb_proc("search", "keyboard focus").json  # from git, catching the index up
    assert len(searched["results"]) == 3
    assert recorded(index) == head(searched_store)
