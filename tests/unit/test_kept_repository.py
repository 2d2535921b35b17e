"""``xbrain serve`` keeps a store's repository open across requests (its packs' indexes
loaded once): what another process does to the store in between is seen, a pack a merge
removed is not kept mapped, and a store made again at the same path is opened afresh."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import make
from xbrain.git import GitStore, repo
from xbrain.store import Store


@pytest.fixture
def keeping(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """This process keeps its repositories, as a server does (closed again after)."""
    monkeypatch.setattr(repo, "_kept", None)
    repo.keep_repositories()
    yield
    repo.release_repositories()


def packs_mapped(store: Path) -> list[str]:
    """This process's mappings of pack files under ``store``."""
    maps = Path("/proc/self/maps").read_text().splitlines()
    return [line for line in maps if f"{store}/.git/objects/pack/" in line]


def deleted_packs_mapped(store: Path) -> list[str]:
    """This process's mappings of pack files under ``store`` that were removed."""
    return [line for line in packs_mapped(store) if "(deleted)" in line]


def packs(store: Path) -> set[str]:
    return {p.name for p in (store / ".git" / "objects" / "pack").glob("*.pack")}


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads /proc/self/maps")
def test_a_kept_repository_sees_another_process_merge_its_packs(
    keeping: None, store_dir: Path, segment_cache: Path
) -> None:
    store = Store(store_dir, cache_dir=segment_cache)
    store.put([make(f"first-{i}") for i in range(80)])  # a pack
    store.put([make(f"second-{i}") for i in range(80)])  # merged with it at once
    store.put([make("loose")])  # loose objects
    with GitStore(store_dir) as git, GitStore(store_dir) as again:
        assert again._repo is git._repo  # one repository, kept across opens
    assert store.get(store.list()["results"][0]["id"]) is not None  # its packs mapped
    before = packs(store_dir)
    # another process packs everything anew and removes the old pack
    done = subprocess.run(
        ["git", "-C", str(store_dir), "repack", "-a", "-d", "-q"], capture_output=True
    )
    assert done.returncode == 0, done.stderr
    assert packs(store_dir) and not packs(store_dir) & before
    assert deleted_packs_mapped(store_dir) != []  # still open in the kept repository
    # the next request reads through the same repository: every record still there, and
    # the removed packs are no longer mapped (a server never holds their space)
    ids = [item["id"] for item in store.list(limit=1000)["results"]]
    assert len(ids) == 161
    assert all(store.get(rid) is not None for rid in ids[:5])
    store.put([make("third")])
    assert deleted_packs_mapped(store_dir) == []
    assert Store(store_dir, cache_dir=segment_cache).status()["resources"] == 162


def test_a_store_made_again_at_the_path_is_opened_afresh(
    keeping: None, store_dir: Path, segment_cache: Path
) -> None:
    Store(store_dir, cache_dir=segment_cache).put([make("old")])
    with GitStore(store_dir) as git:
        first = git.head()
    shutil.rmtree(store_dir)
    Store(store_dir, cache_dir=segment_cache).put([make("new")])
    with GitStore(store_dir) as git:
        assert git.head() != first
    listed = Store(store_dir, cache_dir=segment_cache).list()["results"]
    assert [item["title"] for item in listed] == [make("new")["title"]]


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads /proc/self/maps")
def test_released_repositories_are_closed(
    keeping: None, store_dir: Path, segment_cache: Path
) -> None:
    store = Store(store_dir, cache_dir=segment_cache)
    store.put([make(f"item-{i}") for i in range(80)])
    assert store.get(store.list()["results"][0]["id"]) is not None
    with GitStore(store_dir) as git:
        kept = git._repo
        assert packs_mapped(store_dir) != []  # the kept repository's packs, still open
    repo.release_repositories()
    assert packs_mapped(store_dir) == []
    with GitStore(store_dir) as git:
        assert git._repo is not kept  # opened again after the release


def test_a_process_that_keeps_nothing_closes_each_repository(
    store_dir: Path, segment_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(repo, "_kept", None)
    Store(store_dir, cache_dir=segment_cache).put([make("one")])
    with GitStore(store_dir) as git, GitStore(store_dir) as again:
        assert again._repo is not git._repo
    done = subprocess.run(["git", "-C", str(store_dir), "fsck", "--strict"], capture_output=True)
    assert done.returncode == 0, done.stderr
