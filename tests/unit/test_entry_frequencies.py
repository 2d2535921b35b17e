"""A server's entry cache in memory (``search/entryloaded.py``) answers a prompt's
candidates with each term's entry count read off its postings when scoring asks, not
counted beforehand for every term of every candidate entry: the counts, and so recall's
scores, are the ones the cache file gives a fresh process."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EXAMPLES
from xbrain.search import entrycache
from xbrain.search.query import main_head

PROMPTS = [
    {"can", "i", "git", "push", "force", "to", "main"},
    {"indent", "with", "tabs", "python", "code", "review"},
]


def test_the_counts_in_memory_are_the_cache_files(
    xb: Callable[..., Any], store_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert xb("entry", "import", str(EXAMPLES / "memex")).code == 0
    assert xb("recall", "-", input="git push").code == 0  # the cache built
    control = store_dir / ".git"
    head = main_head(control)
    assert head is not None
    for terms in PROMPTS:
        monkeypatch.setattr(entrycache, "_WARM", None)
        fresh = entrycache.candidates(control, head, terms)
        entrycache.keep_warm()
        served = entrycache.candidates(control, head, terms)
        assert fresh is not None and served is not None and fresh.entries
        assert [e["id"] for e, _ in served.entries] == [e["id"] for e, _ in fresh.entries]
        asked = terms | {
            t for e, _ in fresh.entries for _, ts in e["queries"] + e["keywords"] for t in ts
        }
        asked |= {t for e, _ in fresh.entries for t in e["about"]}
        assert {t: served.df.get(t, 0) for t in asked} == {t: fresh.df.get(t, 0) for t in asked}
        assert served.n == fresh.n


@pytest.mark.parametrize("upsert", [True, False], ids=["upsert", "sqlite-before-3.24"])
def test_a_cache_kept_up_by_writes_counts_what_a_build_counts(
    xb: Callable[..., Any], store_dir: Path, monkeypatch: pytest.MonkeyPatch, upsert: bool
) -> None:
    """Each term's entry count (``df``) after puts, updates and deletes is the one a build
    of the cache gives, with SQLite's upsert or (before 3.24) the two statements."""
    monkeypatch.setattr(entrycache, "_UPSERT", upsert)
    assert xb("entry", "import", str(EXAMPLES / "memex")).code == 0
    assert xb("recall", "-", input="git push").code == 0  # the cache built: writes keep it
    names = ["git push rules", "tabs in python", "git push to main"]
    for i, name in enumerate(names):
        entry = {"kind": "rule", "name": name, "description": f"{name} always", "body": name}
        assert xb("entry", "put", "-", input=json.dumps(entry)).code == 0, i
    cache = store_dir / ".git" / entrycache.CACHE_FILE

    def tables() -> tuple[list[Any], list[Any]]:
        with sqlite3.connect(cache) as conn:
            df = conn.execute("SELECT term, n FROM df ORDER BY term").fetchall()
            meta = conn.execute("SELECT value FROM meta WHERE key = 'commit'").fetchall()
        return df, meta

    kept = tables()
    assert kept[1] == [(main_head(store_dir / ".git"),)]  # the writes kept it, not a build
    for suffix in ("", "-wal", "-shm"):
        cache.with_name(cache.name + suffix).unlink(missing_ok=True)
    assert xb("recall", "-", input="git push").code == 0  # built again from the commit
    assert tables() == kept and len(kept[0]) > 50
