"""The working tree after a commit is written from the bytes the commit wrote — only when
they are the blob the commit holds at that path."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import make
from xbrain.core import GitStore
from xbrain.store import Store

PATH = "index/catalog/e6.json"


def test_written_bytes_are_used_only_when_they_are_the_committed_blob(
    tmp_path: Path, segment_cache: Path
) -> None:
    store = Store(tmp_path / "store", cache_dir=segment_cache)
    store.put([make("w1")])
    with GitStore(store.path) as git:
        parent = git.head()
        assert parent is not None
        committed = b'{"x": 1}\n'
        commit = git.commit(parent, {PATH: committed}, "edit\n", "t <t@t>", 0)
        git.refresh_worktree(commit, [PATH], written={PATH: b"not what the commit holds\n"})
        assert (store.path / PATH).read_bytes() == committed
        again = git.commit(commit, {PATH: b'{"x": 2}\n'}, "edit\n", "t <t@t>", 0)
        git.refresh_worktree(again, [PATH], written={PATH: b'{"x": 2}\n'})
        assert (store.path / PATH).read_bytes() == b'{"x": 2}\n'
        git.refresh_worktree(again, [PATH], written={PATH: None})  # None: read the store
        assert (store.path / PATH).read_bytes() == b'{"x": 2}\n'
