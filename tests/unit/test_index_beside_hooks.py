"""A commit's git index update runs beside its after-commit hooks (a thread: reading,
hashing and writing a 100,000-entry index releases the interpreter), and the write
still ends with the index matching the commit and no pending marker."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import make
from tests.unit.test_refresh_threads import assert_refreshed
from xbrain.core import GitStore
from xbrain.git import indexupdate
from xbrain.store import Store


def test_the_index_is_written_while_the_hooks_run(
    tmp_path: Path, segment_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store(tmp_path / "store", cache_dir=segment_cache)
    store.put([make("first")])
    hooks_running = threading.Event()
    seen: list[bool] = []
    real = indexupdate.update

    def update(*args: Any) -> bool:
        # inline before the hooks (the old order) this waits in vain, and says so
        seen.append(hooks_running.wait(timeout=10))
        return real(*args)

    def hook(*_: object) -> None:
        hooks_running.set()

    monkeypatch.setattr(indexupdate, "update", update)
    store.core.after_commit.insert(0, hook)
    store.put([make("second")])
    assert seen == [True]
    assert_refreshed(store.path)


def test_a_hook_that_fails_still_leaves_the_index_written(
    tmp_path: Path, segment_cache: Path
) -> None:
    store = Store(tmp_path / "store", cache_dir=segment_cache)
    store.put([make("first")])

    def broken(*_: object) -> None:
        raise RuntimeError("a hook's own bug")

    store.core.after_commit.insert(0, broken)
    with pytest.raises(RuntimeError):
        store.put([make("second")])
    with GitStore(store.path) as git:
        head = git.head()
        assert head is not None
        assert git.index_paths() == dict(git.snapshot(head).files())
        assert git.pending_worktree_paths() == []
