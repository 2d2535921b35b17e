"""A write reads each git tree from the object store at most once: the transaction's
snapshot, the commit built on it and the working-tree refresh after it share one tree
cache (a batch into a 100,000-record store changes the 256 ``resources/<aa>/`` trees,
and every object read there probes each pack), and ``xbrain serve`` keeps the cache
across its writes."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import make
from xbrain.git import objects, writing
from xbrain.git.near import Near
from xbrain.store import Store


@pytest.fixture
def tree_reads(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter[bytes]]:
    """How many times each tree was read from the object store (any reader: a
    snapshot's reads go through :class:`Near` first, then ``load_object``)."""
    reads: Counter[bytes] = Counter()
    real = objects.load_object

    def counted(repo: object, sha: bytes) -> object:
        found = real(repo, sha)  # type: ignore[arg-type]
        if found.type_name == b"tree":
            reads[sha] += 1
        return found

    near = Near.load

    def counted_near(self: Near, sha: bytes) -> object:
        found = near(self, sha)
        if found is not None and found.type_name == b"tree":
            reads[sha] += 1
        return found

    monkeypatch.setattr(objects, "load_object", counted)
    monkeypatch.setattr(writing, "load_object", counted)
    monkeypatch.setattr(Near, "load", counted_near)  # a snapshot's reads, where the last was
    yield reads


def test_a_batch_reads_each_tree_once(
    tmp_path: Path, segment_cache: Path, tree_reads: Counter[bytes]
) -> None:
    store = Store(tmp_path / "store", cache_dir=segment_cache)
    store.put([make(f"first-{i}") for i in range(60)])
    tree_reads.clear()
    store.put([make(f"batch-{i}") for i in range(60)])
    assert tree_reads, "the batch read no tree at all"
    twice = {sha.decode(): n for sha, n in tree_reads.items() if n > 1}
    assert twice == {}, f"trees read more than once: {twice}"
    assert store.status()["resources"] == 120


def test_kept_trees_are_not_read_again_by_the_next_write(
    tmp_path: Path, segment_cache: Path, tree_reads: Counter[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(objects, "_kept", None)
    objects.keep_trees()
    store = Store(tmp_path / "store", cache_dir=segment_cache)
    store.put([make(f"first-{i}") for i in range(20)])
    tree_reads.clear()
    store.put([make("second")])
    # the commit's own new trees and every unchanged one are kept: nothing read again
    assert dict(tree_reads) == {}
    assert store.status()["resources"] == 21


def test_the_tree_cache_drops_the_least_recently_used_past_its_bound(tmp_path: Path) -> None:
    from dulwich.objects import Tree

    trees = objects.Trees(limit=10)
    made = []
    for i in range(5):
        tree = Tree()
        for j in range(4):
            tree.add(f"f{j}".encode(), 0o100644, ("%040x" % (i * 10 + j)).encode())  # type: ignore[arg-type]
        made.append(tree)
        trees.add(tree)
    kept = [tree for tree in made if bytes(tree.id) in trees._trees]
    assert kept == made[-2:]  # 8 entries: the two newest trees
    assert trees._entries == 8
