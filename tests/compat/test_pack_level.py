"""A write's pack is compressed at zlib level 1, its trees stored (level 0), unless git's
settings name a level: the default level spends 3-4 times as long on a catalog shard for
2.5 % less (a batch into a 100,000-record store compresses ~25 MB of trees and shards),
and level 1 spent 0.23 s on the 19 MB of trees a batch into a 180,000-record store
rewrites, for 37 % less."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from dulwich.objects import Blob, Tree
from dulwich.repo import Repo

from xbrain.git.packwrite import write_pack

pytestmark = [
    pytest.mark.compat,
    pytest.mark.skipif(shutil.which("git") is None, reason="the git binary is not installed"),
]


def _levels(pack: Path, kind: str = "blob") -> set[tuple[bytes, int]]:
    """The zlib headers of the pack's objects of ``kind`` (none is a delta), with the type
    of each stream's first deflate block (0: stored), at the offsets ``git verify-pack``
    lists (it checks the pack too)."""
    listed = subprocess.run(
        ["git", "verify-pack", "-v", str(pack.with_suffix(".idx"))], capture_output=True, text=True
    )
    assert listed.returncode == 0, listed.stderr
    data, found = pack.read_bytes(), set()
    for line in listed.stdout.splitlines():
        fields = line.split()
        if len(fields) == 5 and fields[1] == kind:
            at = int(fields[4])
            while data[at] & 0x80:  # the object header (type and size), a varint
                at += 1
            found.add((data[at + 1 : at + 3], data[at + 3] >> 1 & 3))
    return found


def _written(root: Path, tag: bytes) -> Path:
    """The pack of one write of 70 blobs and a tree naming them into the repository at
    ``root``."""
    before = set((root / ".git" / "objects" / "pack").glob("*.pack"))
    blobs = [Blob.from_string(tag + b" %d\n" % i * 40) for i in range(70)]
    tree = Tree()
    for i, blob in enumerate(blobs):
        tree.add(b"resource_%064d.yaml" % i, 0o100644, blob.id)
    with Repo(str(root)) as repo:
        write_pack(repo.object_store, [*blobs, tree])
    (pack,) = set((root / ".git" / "objects" / "pack").glob("*.pack")) - before
    return pack


def test_a_writes_pack_is_compressed_at_level_1_its_trees_stored_unless_git_says(
    tmp_path: Path,
) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    fast = _written(tmp_path, b"fast")
    assert {header for header, _ in _levels(fast)} == {b"\x78\x01"}
    assert {block for _, block in _levels(fast)} != {0}  # compressed, not stored
    assert _levels(fast, "tree") == {(b"\x78\x01", 0)}  # stored
    subprocess.run(["git", "-C", str(tmp_path), "config", "core.compression", "9"], check=True)
    best = _written(tmp_path, b"best")
    assert {header for header, _ in _levels(best)} == {b"\x78\xda"}
    ((header, block),) = _levels(best, "tree")
    assert (header, block != 0) == (b"\x78\xda", True)
    fsck = subprocess.run(["git", "-C", str(tmp_path), "fsck", "--strict"], capture_output=True)
    assert fsck.returncode == 0, fsck.stderr


def test_a_merge_compresses_the_trees_a_write_stored(tmp_path: Path) -> None:
    """xbrain gc merges two writes' packs into one whose trees are compressed again: the
    newest version of each is copied whole, and would otherwise stay stored for good."""
    from tests.conftest import make
    from xbrain.store import Store

    store = Store(tmp_path / "store")
    for batch in ("one", "two"):
        before = set((tmp_path / "store" / ".git" / "objects" / "pack").glob("*.pack"))
        store.put([make(f"{batch}-{i}", title=f"Page {i} of {batch}") for i in range(120)])
        if batch == "one":
            packs = set((tmp_path / "store" / ".git" / "objects" / "pack").glob("*.pack"))
            (written,) = packs - before
            assert {block for _, block in _levels(written, "tree")} == {0}  # stored
    assert store.gc()["after"]["packs"] == 1
    (merged,) = (tmp_path / "store" / ".git" / "objects" / "pack").glob("*.pack")
    trees = _levels(merged, "tree")
    assert trees and all(block != 0 for _, block in trees), trees
    fsck = subprocess.run(["git", "-C", str(tmp_path / "store"), "fsck", "--strict"])
    assert fsck.returncode == 0
