"""The compare-and-swap of ``main`` (``xbrain/git/writing.py``): a commit built on a head
that is no longer the head is refused, and ``main`` keeps what moved it meanwhile."""

from __future__ import annotations

from pathlib import Path

import pytest

from xbrain.core import GitStore
from xbrain.errors import ConflictError

WHO = "t <t@t>"


def test_moving_main_from_an_old_commit_that_is_no_longer_the_head_is_refused(
    tmp_path: Path,
) -> None:
    GitStore.init_private(tmp_path)
    with GitStore(tmp_path) as git:
        old = git.commit(None, {"a.txt": b"a\n"}, "first\n", WHO, 0)
        moved = git.commit(old, {"b.txt": b"by someone else\n"}, "second\n", WHO, 1)
        assert git.head() == moved
        pending = git.pending_worktree_paths()  # what these commits left to refresh
        # a write that took its snapshot at ``old``: through commit() and move_main()
        with pytest.raises(ConflictError, match="The store changed during this write"):
            git.commit(old, {"c.txt": b"late\n"}, "late\n", WHO, 2)
        assert git.head() == moved
        stray = git.write_commit(old, {"c.txt": b"late\n"}, "late\n", WHO, 2)
        with pytest.raises(ConflictError):
            git.move_main(old, stray, WHO, "late\n")
        assert git.head() == moved
        assert git.snapshot().read("b.txt") == b"by someone else\n"
        assert git.snapshot().read("c.txt") is None
        assert git.pending_worktree_paths() == pending  # a refused move adds nothing
        # from the current head the same change goes through
        assert git.commit(moved, {"c.txt": b"late\n"}, "late\n", WHO, 2) == git.head()


def test_the_first_commit_is_refused_when_main_already_exists(tmp_path: Path) -> None:
    GitStore.init_private(tmp_path)
    with GitStore(tmp_path) as git:
        first = git.commit(None, {"a.txt": b"a\n"}, "first\n", WHO, 0)
        with pytest.raises(ConflictError):
            git.commit(None, {"a.txt": b"other\n"}, "again\n", WHO, 1)
        assert git.head() == first
