"""A store's first resources start its search index in the write that brings them
(``search/upkeep``): the batch's conflict check reads its title and purpose postings
instead of running one search per resource, and the rows are those a rebuild writes."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from dulwich.repo import Repo

from tests.conftest import make
from xbrain.kinds.model import normalize_resource
from xbrain.search.query import INDEX_FILE
from xbrain.store import Store
from xbrain.store.resourcefacts import ResourceFacts


@pytest.fixture
def searches(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The titles the conflict check had to run a whole search for (the index could not
    answer from its postings)."""
    asked: list[str] = []
    real = ResourceFacts._similar

    def counting(self: ResourceFacts, title: str, purpose: str) -> list[dict[str, Any]]:
        asked.append(title)
        return real(self, title, purpose)

    monkeypatch.setattr(ResourceFacts, "_similar", counting)
    return asked


def _batch(count: int, tag: str) -> list[dict[str, Any]]:
    return [make(f"{tag}-{i}", title=f"Deploy runbook {tag} {i}") for i in range(count)]


def _index(store: Store) -> tuple[str | None, list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """The commit the index records, its documents (numbers too) and postings, by id."""
    with sqlite3.connect(store.path / ".git" / INDEX_FILE) as conn:
        commit = conn.execute("SELECT value FROM meta WHERE key = 'commit'").fetchone()
        docs = conn.execute(
            "SELECT rid, doc, l0, l1, l2, l3, l4, l5, resource FROM docs ORDER BY rid"
        )
        postings = conn.execute(
            "SELECT term, rid, f0, f1, f2, f3, f4, f5 FROM postings JOIN docs USING (doc) "
            "ORDER BY term, rid"
        )
        return None if commit is None else commit[0], docs.fetchall(), postings.fetchall()


def _head(store: Store) -> str:
    with Repo(str(store.path)) as repo:
        return repo.refs[b"refs/heads/main"].decode()


def test_a_first_batch_is_checked_from_the_index_its_write_started(
    tmp_path: Path, segment_cache: Path, searches: list[str]
) -> None:
    store = Store(tmp_path / "store", cache_dir=segment_cache)
    batch = _batch(6, "first")
    store.put(batch)
    assert searches == []  # every candidate from the postings (was: a search each)
    commit, docs, postings = _index(store)
    assert commit == _head(store)
    assert [row[0] for row in docs] == sorted(normalize_resource(r).resource["id"] for r in batch)
    store.reindex()  # the rows a build writes from the commit, numbered as it numbers them
    assert _index(store) == (commit, docs, postings)
    assert [row[1] for row in docs] == list(range(1, 7))
    assert len(postings) > 50


def test_a_single_first_put_starts_the_index_and_a_later_put_updates_it(
    tmp_path: Path, segment_cache: Path, searches: list[str]
) -> None:
    store = Store(tmp_path / "store", cache_dir=segment_cache)
    store.put(make("one", title="Deploy runbook one"))
    store.put(make("two", title="Deploy runbook one"))  # the same title: a conflict
    assert searches == []
    result = store.put(make("three", title="Deploy runbook one"))
    conflicts = result["results"][0]["possibleConflicts"]
    assert sorted(c["why"] for c in conflicts) == ["same title", "same title"]
    commit, docs, _ = _index(store)
    assert commit == _head(store) and len(docs) == 3


def test_a_missing_index_in_a_store_with_resources_is_built_once_for_a_batch(
    tmp_path: Path, segment_cache: Path, searches: list[str]
) -> None:
    store = Store(tmp_path / "store", cache_dir=segment_cache)
    store.put(_batch(3, "before"))
    index = store.path / ".git" / INDEX_FILE
    for suffix in ("", "-wal", "-shm"):  # gone: the write does not start it (others exist)
        index.with_name(index.name + suffix).unlink(missing_ok=True)
    store.put(_batch(5, "after"))
    assert len(searches) == 1  # the first search built it; the other four read it
    commit, docs, _ = _index(store)
    assert commit == _head(store) and len(docs) == 8
