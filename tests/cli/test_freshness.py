"""Derived indexes are written only by commits that change their kind (issue 45 item 3),
and readers still never answer from an index older than the commit ``main`` names."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EXAMPLES, Result, head, sample
from xbrain.kinds.entry import entry_id
from xbrain.recall import warm
from xbrain.search import freshness
from xbrain.search import skills as indexed
from xbrain.search.entrycache import cache_meta
from xbrain.search.query import open_current
from xbrain.search.skills import skill_index_meta

SKILL = EXAMPLES / "skills" / "deploy-check"
MEMEX = EXAMPLES / "memex"
RULE = entry_id("global", "no-force-push")


def databases(store: Path) -> dict[str, Path]:
    return {
        "skills": store / ".git/xbrain/skills.sqlite",
        "entries": store / ".git/xbrain/entries.sqlite",
    }


def contents(path: Path) -> dict[str, bytes]:
    """A database's bytes with its WAL (what any write changes)."""
    return {
        suffix: path.with_name(path.name + suffix).read_bytes()
        for suffix in ("", "-wal")
        if path.with_name(path.name + suffix).exists()
    }


def recorded(path: Path) -> str:
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        (commit,) = conn.execute("SELECT value FROM meta WHERE key = 'commit'").fetchone()
    return str(commit)


def current(store: Path) -> dict[str, bool]:
    """Whether each index answers for ``main`` right now (the readers' own check)."""
    now = head(store)
    assert now is not None
    paths = databases(store)
    found = {}
    for name, meta in (("skills", skill_index_meta), ("entries", cache_meta)):
        conn = open_current(paths[name], meta(now))
        found[name] = conn is not None
        if conn is not None:
            conn.close()
    return found


@pytest.fixture
def indexed_store(xb: Callable[..., Result], store_dir: Path) -> Path:
    """A store with a skill and entries, its skill index and entry cache built."""
    assert xb("skill", "save", str(SKILL)).code == 0
    assert xb("entry", "import", str(MEMEX)).code == 0
    assert xb("recall", "-", input="deploy check git push --force").code == 0
    assert xb("skill", "recall", "deploy").json["count"] >= 1
    assert current(store_dir) == {"skills": True, "entries": True}
    return store_dir


def test_a_resource_put_by_another_process_writes_neither_index(
    indexed_store: Path, xb_proc: Callable[..., Result], json_file: Callable[[Any], str]
) -> None:
    """The put's commit touches no skill and no entry: both databases keep every byte
    and the commit they record, and still answer for the new ``main`` — the fast paths
    (Level 1, entry list, the warm-up check) need no git."""
    paths = databases(indexed_store)
    before = {name: contents(path) for name, path in paths.items()}
    was = head(indexed_store)
    assert xb_proc("put", json_file(sample())).code == 0
    assert head(indexed_store) != was
    for name, path in paths.items():
        assert contents(path) == before[name], name
        assert recorded(path) == was
    assert current(indexed_store) == {"skills": True, "entries": True}
    assert indexed.level1(indexed_store, "deploy-check") is not None
    assert not warm.behind(indexed_store / ".git")


def test_a_commit_that_changes_a_kind_updates_its_index_only(
    indexed_store: Path, xb_proc: Callable[..., Result], tmp_path: Path
) -> None:
    paths = databases(indexed_store)
    skills_before = contents(paths["skills"])
    assert xb_proc("entry", "retire", RULE).code == 0  # another process: an entry changes
    now = head(indexed_store)
    assert recorded(paths["entries"]) == now  # written by the commit's hook
    assert contents(paths["skills"]) == skills_before  # not written
    assert current(indexed_store) == {"skills": True, "entries": True}
    listed = xb_proc("entry", "list", "--status", "retired").json["entries"]
    assert [e["id"] for e in listed] == [RULE]
    edited = tmp_path / "deploy-check"
    shutil.copytree(SKILL, edited)
    (edited / "SKILL.md").write_text((edited / "SKILL.md").read_text() + "\nOne more line.\n")
    assert xb_proc("skill", "save", str(edited)).code == 0  # a skill changes
    assert recorded(paths["skills"]) == head(indexed_store)
    assert recorded(paths["entries"]) == now  # carried by a note, not written
    assert current(indexed_store) == {"skills": True, "entries": True}


def test_readers_never_answer_from_an_index_older_than_main(
    indexed_store: Path, xb: Callable[..., Result]
) -> None:
    """A commit no xbrain hook saw (git run by hand, another process): neither index
    answers for it, even though it changed nothing they hold; the reads go to git and
    answer the same. A note for another pair of commits counts for nothing."""
    if shutil.which("git") is None:
        pytest.skip("the git binary is not installed (make test installs it)")
    slow = xb("skill", "recall", "--slug", "deploy-check").json
    who = ["-c", "user.name=t", "-c", "user.email=t@x.invalid"]
    subprocess.run(
        ["git", "-C", str(indexed_store), *who, "commit", "-q", "--allow-empty", "-m", "by hand"],
        check=True,
    )
    assert current(indexed_store) == {"skills": False, "entries": False}
    assert indexed.level1(indexed_store, "deploy-check") is None
    assert warm.behind(indexed_store / ".git")
    assert xb("skill", "recall", "--slug", "deploy-check").json == slow
    paths = databases(indexed_store)
    old = recorded(paths["entries"])
    freshness.note_path(paths["entries"]).write_text(f"{old} {'0' * 40}\n")
    assert not freshness.reflects(paths["entries"], old, str(head(indexed_store)))
    assert freshness.reflects(paths["entries"], old, "0" * 40)
    assert xb("recall", "-", input="git push --force").code == 0  # catches up from git
    assert recorded(paths["entries"]) == head(indexed_store)
    assert current(indexed_store)["entries"]
