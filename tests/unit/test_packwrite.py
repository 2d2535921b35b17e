"""A batch's pack is written with its index from the writer's own offsets (issue 45
item 4): git reads and verifies it, it is private and read-only, and the same objects
written again add no second pack."""

from __future__ import annotations

import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from xbrain.git import GitStore

HAS_GIT = shutil.which("git") is not None


def _packs(store: Path) -> list[Path]:
    return sorted((store / ".git" / "objects" / "pack").glob("pack-*.pack"))


def test_a_batch_pack_is_complete_private_and_not_written_twice(tmp_path: Path) -> None:
    store = tmp_path / "store"
    files = {f"notes/{i:03d}.txt": f"line {i}\n".encode() * (i + 1) for i in range(200)}
    assert GitStore.create(store, files, "batch\n", "t <t@t>", 1)
    with GitStore(store) as git:
        first = git.head()
        assert first is not None
        again = git.write_commit(None, files, "batch\n", "t <t@t>", 1)
        assert again == first
        snap = git.snapshot(first)
        assert all(snap.read(path) == data for path, data in files.items())
    packs = _packs(store)
    assert len(packs) == 1
    for path in (packs[0], packs[0].with_suffix(".idx")):
        assert stat.S_IMODE(path.stat().st_mode) == 0o400, path
    assert not list(packs[0].parent.glob("tmp*"))
    if HAS_GIT:
        subprocess.run(["git", "-C", str(store), "fsck", "--strict", "--full"], check=True)
        subprocess.run(["git", "verify-pack", str(packs[0].with_suffix(".idx"))], check=True)


@pytest.mark.skipif(not HAS_GIT, reason="git not installed")
def test_git_reads_every_object_of_a_batch_pack(tmp_path: Path) -> None:
    store = tmp_path / "store"
    files = {f"d{i % 7}/f{i}.txt": f"{i}\n".encode() for i in range(100)}
    assert GitStore.create(store, files, "batch\n", "t <t@t>", 1)
    with GitStore(store) as git:
        commit = git.head()
    for path, data in list(files.items())[:10]:
        shown = subprocess.run(
            ["git", "-C", str(store), "show", f"{commit}:{path}"], capture_output=True, check=True
        )
        assert shown.stdout == data


def test_a_big_tree_is_compressed_as_one_piece(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tree serializes as one chunk per entry; the pack compresses each object whole,
    not entry by entry (a batch into a 100,000-record store writes 256 trees of ~400)."""
    import zlib

    from xbrain.git import packwrite

    calls: list[int] = []
    real = zlib.compress

    def counted(data: bytes, /, level: int = -1, **kwargs: int) -> bytes:
        calls.append(len(data))
        return real(data, level, **kwargs)

    store = tmp_path / "store"
    files = {f"notes/{i:04d}.txt": f"{i}\n".encode() for i in range(1000)}
    monkeypatch.setattr(packwrite.zlib, "compress", counted)
    assert GitStore.create(store, files, "batch\n", "t <t@t>", 1)
    monkeypatch.undo()
    objects = 1000 + 2 + 1  # the blobs, two trees, the commit
    assert len(calls) == objects, len(calls)  # one piece each
    with GitStore(store) as git:
        snap = git.snapshot()
        assert all(snap.read(path) == data for path, data in files.items())


def test_many_bytes_are_compressed_on_two_threads_into_a_pack_git_verifies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past a megabyte the objects are compressed on two threads (zlib lets go of the
    interpreter), then written in their order: git verifies the pack and reads each
    object back, and the pack is the one the single-thread path writes."""
    import random
    import threading
    import zlib

    from xbrain.git import packwrite

    rng = random.Random(7)
    files = {f"d{i % 5}/f{i}.bin": rng.randbytes(rng.randint(1, 40_000)) for i in range(120)}
    names: set[str] = set()
    real = zlib.compress

    def recorded(data: bytes, /, level: int = -1, **kwargs: int) -> bytes:
        names.add(threading.current_thread().name)
        return real(data, level, **kwargs)

    monkeypatch.setattr(packwrite.zlib, "compress", recorded)
    assert GitStore.create(tmp_path / "two", files, "batch\n", "t <t@t>", 1)
    monkeypatch.undo()
    assert names and all(name.startswith("xbrain-pack") for name in names), names
    monkeypatch.setattr(packwrite, "_PARALLEL_BYTES", 1 << 40)
    assert GitStore.create(tmp_path / "one", files, "batch\n", "t <t@t>", 1)
    (two,), (one,) = _packs(tmp_path / "two"), _packs(tmp_path / "one")
    assert two.read_bytes() == one.read_bytes()
    assert two.with_suffix(".idx").read_bytes() == one.with_suffix(".idx").read_bytes()
    with GitStore(tmp_path / "two") as git:
        snap = git.snapshot()
        assert all(snap.read(path) == data for path, data in files.items())
    if HAS_GIT:
        store = str(tmp_path / "two")
        subprocess.run(["git", "-C", store, "fsck", "--strict", "--full"], check=True)
        subprocess.run(["git", "verify-pack", str(two.with_suffix(".idx"))], check=True)


def test_a_commit_whose_files_repeat_packs_each_object_once(tmp_path: Path) -> None:
    # the same bytes at many paths, and two directories alike: one blob, one tree each
    store = tmp_path / "store"
    files = {f"{side}/f{i:03d}.txt": f"{i % 40}\n".encode() for side in "ab" for i in range(80)}
    assert GitStore.create(store, files, "repeats\n", "t <t@t>", 1)
    (pack,) = _packs(store)
    header = int.from_bytes(pack.read_bytes()[8:12], "big")
    index = pack.with_suffix(".idx").read_bytes()
    indexed = int.from_bytes(index[8 + 255 * 4 : 8 + 256 * 4], "big")  # v2 fan-out's last
    assert header == indexed == 40 + 1 + 1 + 1  # blobs, the two alike trees, root, commit
    with GitStore(store) as git:
        snap = git.snapshot()
        assert all(snap.read(path) == data for path, data in files.items())
    if HAS_GIT:
        subprocess.run(["git", "-C", str(store), "fsck", "--strict", "--full"], check=True)
        subprocess.run(["git", "verify-pack", str(pack.with_suffix(".idx"))], check=True)
