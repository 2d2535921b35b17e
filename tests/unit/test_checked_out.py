"""A snapshot of ``main`` reads a file from the working tree only when its bytes are the
committed blob: a hand edit, a link (to a file or through a folder), a FIFO, a missing
file all fall back to the object store, and every read returns the committed bytes."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from dulwich.objects import Blob, ShaFile
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import make
from xbrain.core import GitStore
from xbrain.git import objects
from xbrain.store import Store


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store of three resources, its working tree refreshed as after any write."""
    path = tmp_path_factory.mktemp("checked-out") / "store"
    store = Store(path)
    store.init()
    store.put([make(f"page-{i}") for i in range(3)])
    return path


@pytest.fixture
def store(template: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "store"
    shutil.copytree(template, copy, symlinks=True)
    return copy


def committed(path: Path) -> dict[str, bytes]:
    """Every file of ``main`` as the object store holds it (no working tree read)."""
    with GitStore(path) as git:
        snap = git.snapshot(git.head())  # an explicit commit: never the working tree
        return {name: snap.blob(blob) for name, blob in snap.files()}


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[bytes]]:
    """The ids of the blobs snapshots read from the object store (trees are always)."""
    seen: list[bytes] = []
    real = objects.Snapshot._object

    def spy(snap: objects.Snapshot, sha: bytes) -> ShaFile:
        found = real(snap, sha)
        if isinstance(found, Blob):
            seen.append(sha)
        return found

    monkeypatch.setattr(objects.Snapshot, "_object", spy)
    yield seen


def blob_loads(path: Path, loads: list[bytes]) -> dict[str, bytes]:
    """Read every file through a snapshot of ``main``; what it returned (``loads`` then
    holds the blobs it read from the object store)."""
    with GitStore(path) as git:
        snap = git.snapshot()
        names = [name for name, _ in snap.files()]
        loads.clear()
        out = {}
        for name in names:
            data = snap.read(name)
            assert data is not None
            out[name] = data
        return out


def test_files_the_working_tree_holds_as_committed_are_read_there(
    store: Path, loads: list[bytes]
) -> None:
    files = committed(store)
    assert blob_loads(store, loads) == files
    assert loads == []  # not one blob from the object store


def test_an_edited_missing_or_linked_file_is_read_from_git(
    store: Path, tmp_path: Path, loads: list[bytes]
) -> None:
    files = committed(store)
    records = sorted(name for name in files if name.startswith("resources/"))
    edited, missing, linked = records
    (store / edited).write_bytes(files[edited] + b"# a hand edit\n")
    (store / missing).unlink()
    outside = tmp_path / "outside.yaml"
    outside.write_bytes(files[linked])  # the very bytes: still not read through a link
    (store / linked).unlink()
    (store / linked).symlink_to(outside)
    assert blob_loads(store, loads) == files
    with GitStore(store) as git:
        ids = {git.snapshot().blob_id(name) for name in (edited, missing, linked)}
    assert {sha.decode() for sha in loads} == ids


def test_a_folder_reached_through_a_link_is_never_read(
    store: Path, tmp_path: Path, loads: list[bytes]
) -> None:
    files = committed(store)
    catalog = store / "index" / "catalog"
    elsewhere = tmp_path / "elsewhere"
    shutil.move(catalog, elsewhere)  # the same files, one link away
    catalog.symlink_to(elsewhere, target_is_directory=True)
    assert blob_loads(store, loads) == files
    inside = [name for name in files if name.startswith("index/catalog/")]
    with GitStore(store) as git:
        snap = git.snapshot()
        assert {sha.decode() for sha in loads} == {snap.blob_id(name) for name in inside}


def test_a_fifo_in_place_of_a_file_is_not_waited_on(store: Path, loads: list[bytes]) -> None:
    files = committed(store)
    name = "index/summary.json"
    (store / name).unlink()
    os.mkfifo(store / name)
    assert blob_loads(store, loads) == files
    assert len(loads) == 1


EDITS = st.sampled_from(["keep", "edit", "remove", "link", "folder", "truncate"])


@settings(max_examples=25, deadline=None)
@given(edits=st.lists(EDITS, min_size=1, max_size=12))
def test_whatever_the_working_tree_holds_a_read_returns_the_commit(
    template: Path, tmp_path_factory: pytest.TempPathFactory, edits: list[str]
) -> None:
    store = tmp_path_factory.mktemp("any") / "store"
    shutil.copytree(template, store, symlinks=True)
    files = committed(store)
    for name, edit in zip(sorted(files), edits, strict=False):
        target = store / name
        if edit == "edit":
            target.write_bytes(files[name][::-1])
        elif edit == "remove":
            target.unlink()
        elif edit == "link":
            target.unlink()
            target.symlink_to(store / sorted(files)[0])
        elif edit == "folder":
            target.unlink()
            target.mkdir()
        elif edit == "truncate":
            target.write_bytes(files[name][: len(files[name]) // 2])
    with GitStore(store) as git:
        snap = git.snapshot()
        assert {name: snap.read(name) for name in files} == files
