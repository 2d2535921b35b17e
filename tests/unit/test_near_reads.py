"""A snapshot reads an object where the last one was found first (issue 45 item 4: a skill
index build of a store of 80 packs spent most of its time looking each object up in
every pack): the same bytes from packs and loose files alike, without dulwich's
store-wide lookup, and a damaged object is the same CorruptStoreError as before."""

from __future__ import annotations

from pathlib import Path

import pytest

from xbrain.core import GitStore
from xbrain.errors import CorruptStoreError
from xbrain.git import objects


@pytest.fixture
def store(tmp_path: Path) -> tuple[Path, dict[str, bytes]]:
    """Four packs (commits of 100 files) and loose objects (commits of a few)."""
    path = tmp_path / "store"
    path.mkdir()
    GitStore.init_private(path)
    files: dict[str, bytes] = {}
    with GitStore(path) as git:
        parent = None
        for batch in range(6):
            count = 100 if batch < 4 else 3
            new = {f"b{batch}/f{i}.txt": f"batch {batch} file {i}\n".encode() for i in range(count)}
            new[f"b{batch}/empty.txt"] = b""  # an empty blob is found as any other
            files.update(new)
            parent = git.commit(parent, new, f"batch {batch}\n", "t <t@t>", batch)
    assert len(list((path / ".git" / "objects" / "pack").glob("*.pack"))) == 4
    return path, files


def test_every_file_reads_back_from_packs_and_loose_objects_without_the_store_lookup(
    store: tuple[Path, dict[str, bytes]], monkeypatch: pytest.MonkeyPatch
) -> None:
    path, files = store
    looked_up: list[bytes] = []
    real = objects.load_object
    monkeypatch.setattr(
        objects, "load_object", lambda r, sha: looked_up.append(sha) or real(r, sha)
    )
    with GitStore(path) as git:
        snap = git.snapshot()
        assert {name: snap.read(name) for name in files} == files
    assert len(looked_up) == 1  # the commit, read before any file


def test_a_damaged_loose_object_is_the_same_clear_error(
    store: tuple[Path, dict[str, bytes]],
) -> None:
    path, files = store
    with GitStore(path) as git:
        blob = git.snapshot().blob_id("b5/f1.txt")
    assert blob is not None
    loose = path / ".git" / "objects" / blob[:2] / blob[2:]
    loose.chmod(0o600)
    loose.write_bytes(b"not an object")
    with GitStore(path) as git:
        snap = git.snapshot()
        assert snap.read("b5/f0.txt") == files["b5/f0.txt"]  # the loose directory, first
        with pytest.raises(CorruptStoreError, match=f"Git object {blob} is damaged"):
            snap.read("b5/f1.txt")
