"""What a snapshot keeps of the files it read is bounded in count and in bytes, and never
changes what a read returns."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xbrain.core import GitStore
from xbrain.git import objects

SIZES = [10, 700, 3_000, 120, 5_000, 1, 2_500, 900]


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, bytes]]:
    path = tmp_path_factory.mktemp("snapshot")
    GitStore.init_private(path)
    files = {f"d/f{i}.txt": bytes([65 + i]) * size for i, size in enumerate(SIZES)}
    with GitStore(path) as git:
        git.commit(None, files, "files\n", "t <t@t>", 0)
    return path, files


@settings(max_examples=60, deadline=None)
@given(order=st.lists(st.sampled_from(range(len(SIZES))), max_size=40))
def test_reads_return_the_files_and_what_is_kept_stays_within_both_bounds(
    repo: tuple[Path, dict[str, bytes]], order: list[int]
) -> None:
    path, files = repo
    names = sorted(files)
    saved = objects._FILES_KEPT, objects._BYTES_KEPT
    objects._FILES_KEPT, objects._BYTES_KEPT = 3, 4_000  # small, so both bounds are met
    try:
        with GitStore(path) as git:
            snap = git.snapshot()
            for i in order:
                assert snap.read(names[i]) == files[names[i]]
                kept = snap._files.values()
                assert len(snap._files) <= 3 and sum(len(data) for data in kept) <= 4_000
                assert snap._kept == sum(len(data) for data in kept)
    finally:
        objects._FILES_KEPT, objects._BYTES_KEPT = saved


def test_a_file_read_twice_is_read_from_git_once(
    repo: tuple[Path, dict[str, bytes]], monkeypatch: pytest.MonkeyPatch
) -> None:
    path, files = repo
    loads: list[bytes] = []
    real = objects.Snapshot._object  # every object a snapshot reads (load_object or near)
    monkeypatch.setattr(
        objects.Snapshot, "_object", lambda snap, sha: loads.append(sha) or real(snap, sha)
    )
    with GitStore(path) as git:
        snap = git.snapshot()
        name = random.Random(3).choice(sorted(files))
        assert snap.read(name) == snap.read(name) == files[name]
        blob = snap.blob_id(name)
        assert blob is not None and loads.count(blob.encode()) == 1
