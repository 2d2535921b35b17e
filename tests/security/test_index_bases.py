"""A shared index file (``.git/sharedindex.<sha>``) that is a symbolic link is not
followed: the split index naming it is left to the fallback, what it points at is
neither read nor removed."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.compat.test_index_order import git
from tests.conftest import make
from xbrain.store import Store

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="no git binary")


def test_a_base_that_is_a_link_is_not_followed(
    store_dir: Path, segment_cache: Path, tmp_path: Path
) -> None:
    store = Store(store_dir, cache_dir=segment_cache)
    store.put([make(f"link-{i}") for i in range(3)])
    assert git(store_dir, "update-index", "--split-index").returncode == 0
    (base,) = (store_dir / ".git").glob("sharedindex.*")
    outside = tmp_path / "outside"
    base.rename(outside)
    base.symlink_to(outside)
    store.put([make("one")])  # written afresh: the link is not read as a base
    assert outside.read_bytes()[:4] == b"DIRC"
    assert git(store_dir, "fsck", "--strict").returncode == 0
    assert git(store_dir, "status", "--porcelain").returncode == 0
    assert b"link" not in (store_dir / ".git" / "index").read_bytes()
