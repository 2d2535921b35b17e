"""A big refresh (a batch) writes its working-tree files with a few threads: each
create, rename and read waits on the disk, not on the interpreter. The files, the git
index and the errors are the same as one thread's."""

from __future__ import annotations

import errno
import os
import threading
from pathlib import Path

import pytest

from tests.conftest import make
from xbrain.core import GitStore
from xbrain.errors import XbrainError
from xbrain.git import wtfiles
from xbrain.store import Store


def _written_by(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    names: list[str] = []
    real = wtfiles.write_new

    def recorded(path: Path, data: bytes) -> None:
        names.append(threading.current_thread().name)
        real(path, data)

    monkeypatch.setattr(wtfiles, "write_new", recorded)
    return names


def assert_refreshed(store: Path) -> None:
    """The working tree and git index match ``main``: every file its blob, private; no
    refresh left pending."""
    with GitStore(store) as git:
        head = git.head()
        assert head is not None
        snap = git.snapshot(head)
        committed = dict(snap.files())
        assert git.index_paths() == committed
        for path, blob in committed.items():
            assert (store / path).read_bytes() == snap.blob(blob), path
            assert (store / path).stat().st_mode & 0o777 == 0o600, path
        assert git.pending_worktree_paths() == []


def test_a_batch_writes_its_files_with_several_threads(
    tmp_path: Path, segment_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store(tmp_path / "store", cache_dir=segment_cache)
    store.put([make(f"first-{i}") for i in range(10)])
    names = _written_by(monkeypatch)
    store.put(
        [make(f"batch-{i}") for i in range(120)]
        + [make("first-3", title="Changed", updatedAt="2030-01-01T00:00:00.000Z")]
    )
    assert len(names) > 120
    assert all(name.startswith("xbrain-files") for name in names), set(names)
    assert_refreshed(store.path)


def test_a_single_put_writes_on_the_callers_thread(
    tmp_path: Path, segment_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store(tmp_path / "store", cache_dir=segment_cache)
    store.put([make("first")])
    names = _written_by(monkeypatch)
    store.put([make("second")])
    assert names and set(names) == {threading.main_thread().name}


def test_a_full_disk_in_a_threaded_refresh_says_the_change_is_committed(
    tmp_path: Path, segment_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store(tmp_path / "store", cache_dir=segment_cache)
    store.put([make("first")])
    with GitStore(store.path) as git:
        before = git.head()

    def full(path: Path, data: bytes) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))

    monkeypatch.setattr(wtfiles, "write_new", full)
    with pytest.raises(XbrainError, match="the change is committed"):
        store.put([make(f"batch-{i}") for i in range(100)])
    monkeypatch.undo()
    with GitStore(store.path) as git:
        assert git.head() != before
        assert git.pending_worktree_paths() != []  # the next write finishes the refresh
    store.put([make("next")])
    with GitStore(store.path) as git:
        head = git.head()
        assert head is not None
        assert git.index_paths() == dict(git.snapshot(head).files())
        assert git.pending_worktree_paths() == []
    assert store.status()["resources"] == 102


def test_a_batch_checks_each_directory_once_per_pass(
    tmp_path: Path, segment_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The link and file checks of a batch's paths look at each directory once per pass
    (the check before the commit, the refresh after it), not once per path."""
    store = Store(tmp_path / "store", cache_dir=segment_cache)
    store.put([make("first")])
    top = os.path.join(os.fspath(store.path), "resources")
    looked: list[str] = []
    real = os.lstat

    def counted(path: object, *args: object, **kwargs: object) -> os.stat_result:
        if os.fspath(path) == top:  # type: ignore[call-overload]
            looked.append(top)
        return real(path, *args, **kwargs)  # type: ignore[call-overload,no-any-return]

    monkeypatch.setattr(os, "lstat", counted)
    store.put([make(f"batch-{i}") for i in range(80)])
    monkeypatch.undo()
    assert 1 <= len(looked) <= 4, len(looked)
    assert store.status()["resources"] == 81


def test_a_batch_s_files_are_written_while_the_commit_hooks_run(
    tmp_path: Path, segment_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The files wait on the disk, the hooks (search upkeep) on the interpreter: a file is
    written only once a hook has started, which a refresh done before the hooks never
    sees (it waits in vain), and the refresh still ends complete."""
    store = Store(tmp_path / "store", cache_dir=segment_cache)
    store.put([make("first")])
    hooks_running = threading.Event()
    waited: list[bool] = []
    real = wtfiles.write_new

    def after_the_hooks_start(path: Path, data: bytes) -> None:
        waited.append(hooks_running.wait(timeout=0 if False in waited else 5))
        real(path, data)

    def hook(*_: object) -> None:
        hooks_running.set()

    monkeypatch.setattr(wtfiles, "write_new", after_the_hooks_start)
    store.core.after_commit.insert(0, hook)
    store.put([make(f"batch-{i}") for i in range(100)])
    assert len(waited) >= 100 and all(waited)
    assert_refreshed(store.path)
