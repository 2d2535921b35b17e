"""A big store's git index is kept split (git's ``link`` extension over a shared base):
a write rewrites what changed since the base, not the whole 17 MB of a 100,000-record
store's index, and git, ``git fsck --strict`` and xbrain's own readers read it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.compat.test_index_order import assert_git_is_happy, git
from tests.conftest import make
from xbrain.git import GitStore, ewah, splitindex
from xbrain.store import Store

pytestmark = [
    pytest.mark.compat,
    pytest.mark.skipif(shutil.which("git") is None, reason="the git binary is not installed"),
]


def _bases(store_dir: Path) -> list[Path]:
    return sorted((store_dir / ".git").glob("sharedindex.*"))


def _git_sees_the_commit(store_dir: Path) -> None:
    assert_git_is_happy(store_dir)
    assert git(store_dir, "diff", "--cached", "--quiet").returncode == 0  # index == HEAD
    listed = git(store_dir, "ls-files", "-s").stdout.splitlines()
    indexed = {line.split("\t", 1)[1]: line.split()[1] for line in listed}
    with GitStore(store_dir) as repo:
        assert repo.index_paths() == indexed
        assert dict(repo.snapshot(repo.head()).files()) == indexed
        assert repo.index_sorted(repair=False)


def test_a_big_index_is_written_split_and_git_reads_it(
    store_dir: Path, segment_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(splitindex, "SPLIT_MIN", 40)  # this store's index counts as big
    store = Store(store_dir, cache_dir=segment_cache)
    store.put([make(f"batch-{i}") for i in range(60)])
    index = store_dir / ".git" / "index"
    assert len(_bases(store_dir)) == 1 and b"link" in index.read_bytes()
    _git_sees_the_commit(store_dir)
    whole = _bases(store_dir)[0].stat().st_size
    store.put([make("one")])  # a new file: added past the base
    offsets = store_dir / ".git" / "xbrain" / "index-shared-offsets"
    assert offsets.read_bytes()[:20] == bytes.fromhex(_bases(store_dir)[0].name.split(".")[1])
    offsets.write_bytes(b"\0" * 20 + offsets.read_bytes()[20:])  # another base's: not used
    monkeypatch.setattr(splitindex, "_bases", {})  # as a fresh process finds it
    store.put([make("batch-3", title="Changed", updatedAt="2030-01-01T00:00:00Z")])
    assert index.stat().st_size < whole / 4  # what changed, not every entry again
    _git_sees_the_commit(store_dir)
    rid = store.put([make("batch-5")])["results"][0]["id"]
    store.delete(rid)  # a base entry deleted
    _git_sees_the_commit(store_dir)
    store.put([make(f"more-{i}") for i in range(20)])  # past a sixteenth: a new base
    assert len(_bases(store_dir)) == 1  # the one in use: the one before it is removed
    _git_sees_the_commit(store_dir)


def test_git_writing_the_split_index_itself_keeps_it_readable(
    store_dir: Path, segment_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(splitindex, "SPLIT_MIN", 40)
    store = Store(store_dir, cache_dir=segment_cache)
    store.put([make(f"batch-{i}") for i in range(60)])
    store.put([make("one")])
    (store_dir / "resources").touch()
    assert git(store_dir, "update-index", "--really-refresh").returncode == 0  # git writes it
    store.put([make("two")])
    _git_sees_the_commit(store_dir)
    assert b"link" in (store_dir / ".git" / "index").read_bytes()


@pytest.mark.parametrize("bits", [[], [0], [63, 64], [5, 700, 701, 5000], list(range(130))])
def test_ewah_bitmaps_read_back(bits: list[int]) -> None:
    data = ewah.encoded(bits)
    assert ewah.bits(b"x" + data, 1, 5001) == (bits, len(data) + 1)


def test_a_damaged_run_of_set_bits_is_refused_before_it_is_expanded() -> None:
    """A run-length word whose count was flipped would set 2**32 x 64 bits: refused
    against the entries the bitmap stands for, never expanded (memory)."""
    import struct

    huge = (0xFFFFFFFF << 1) | 1  # a run of 2**32 - 1 clean words of set bits
    data = struct.pack(">LLQL", 64, 1, huge, 0)
    with pytest.raises(ValueError, match="past the entries"):
        ewah.bits(data, 0, 100_000)
    assert ewah.bits(struct.pack(">LLQL", 64, 1, (1 << 1) | 1, 0), 0, 64) == (list(range(64)), 20)


def test_core_split_index_false_keeps_a_big_index_whole(
    store_dir: Path, segment_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A repository that says ``core.splitIndex false`` (for tools that cannot read a
    ``link`` extension) keeps its index whole however large it grows."""
    monkeypatch.setattr(splitindex, "SPLIT_MIN", 40)
    store = Store(store_dir, cache_dir=segment_cache)
    store.put([make("first")])
    assert git(store_dir, "config", "core.splitIndex", "false").returncode == 0
    store.put([make(f"batch-{i}") for i in range(60)])
    assert b"link" not in (store_dir / ".git" / "index").read_bytes()
    assert _bases(store_dir) == []
    _git_sees_the_commit(store_dir)


def test_a_base_removed_under_a_long_running_process_is_not_named_again(
    store_dir: Path, segment_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process that remembers a base (``xbrain serve``) finds it removed by someone
    else: its next write does not name the missing file (git could not read the index)."""
    monkeypatch.setattr(splitindex, "SPLIT_MIN", 40)
    store = Store(store_dir, cache_dir=segment_cache)
    store.put([make(f"batch-{i}") for i in range(60)])
    store.put([make("one")])  # this process now remembers the base
    (base,) = _bases(store_dir)
    base.unlink()
    store.put([make("two")])
    _git_sees_the_commit(store_dir)
