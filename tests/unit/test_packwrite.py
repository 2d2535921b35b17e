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

    from dulwich import pack

    calls: list[int] = []
    real = zlib.compressobj

    class Counted:
        def __init__(self, *args: object, **kwargs: object) -> None:
            self._inner = real(*args, **kwargs)  # type: ignore[arg-type]

        def compress(self, data: bytes) -> bytes:
            calls.append(len(data))
            return self._inner.compress(data)

        def flush(self, *args: int) -> bytes:
            return self._inner.flush(*args)

    store = tmp_path / "store"
    files = {f"notes/{i:04d}.txt": f"{i}\n".encode() for i in range(1000)}
    monkeypatch.setattr(pack.zlib, "compressobj", Counted)
    assert GitStore.create(store, files, "batch\n", "t <t@t>", 1)
    monkeypatch.undo()
    objects = 1000 + 2 + 1  # the blobs, two trees, the commit
    assert len(calls) == objects, len(calls)  # one piece each
    with GitStore(store) as git:
        snap = git.snapshot()
        assert all(snap.read(path) == data for path, data in files.items())
