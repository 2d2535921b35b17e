"""A large git index (a 100,000-record store's is 17 MB) is hashed on a second thread
while it is written, and the kernel is asked to start writing it out before the rename:
the file git and dulwich read is the same, checksum included."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest
from dulwich.index import Index

from tests.compat.test_index_order import assert_git_is_happy, git
from tests.conftest import make
from xbrain.git import GitStore
from xbrain.git import index as gitindex
from xbrain.store import Store

pytestmark = [
    pytest.mark.compat,
    pytest.mark.skipif(shutil.which("git") is None, reason="the git binary is not installed"),
]


def test_every_index_written_the_large_way_is_valid_for_git_and_dulwich(
    store_dir: Path, segment_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(gitindex, "_LARGE", 0)  # the small store's index takes that path
    store = Store(store_dir, cache_dir=segment_cache)
    store.put([make(f"batch-{i}") for i in range(40)])  # the whole index parsed and written
    for i in range(3):  # spliced in place
        store.put([make(f"one-{i}")])
    index = store_dir / ".git" / "index"
    data = index.read_bytes()
    assert hashlib.sha1(data[:-20]).digest() == data[-20:]
    assert (store_dir / ".git" / "xbrain" / "index-stamp").read_bytes() == data[-20:]
    assert not (store_dir / ".git" / "index.lock").exists()
    assert_git_is_happy(store_dir)
    paths = [path.decode() for path in Index(str(index))]  # dulwich checks the checksum
    assert sum(path.startswith("resources/") for path in paths) == 43
    with GitStore(store_dir) as repo:
        assert sorted(repo.index_paths()) == sorted(paths)
    assert git(store_dir, "diff", "--cached", "--quiet").returncode == 0
