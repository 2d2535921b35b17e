"""A write's snapshot of ``main`` reads a file from the working tree only when its bytes
are the committed blob: a hand edit, a link (to a file or through a folder), a FIFO, a missing
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
from xbrain.git.checkedout import CheckedOut, blob_sha
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
        snap = git.snapshot(checked_out=True)
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


def test_a_read_alone_reads_the_object_store(store: Path, loads: list[bytes]) -> None:
    """Only a write's view reads the working tree: a read reports a missing or damaged
    object as it meets it (``get`` and ``status`` say exit 7)."""
    files = committed(store)
    with GitStore(store) as git:
        snap = git.snapshot()
        loads.clear()
        assert {name: snap.read(name) for name in files} == files
        assert sorted(sha.decode() for sha in loads) == sorted(
            {snap.blob_id(name) for name in files}
        )


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
        ids = {git.snapshot(checked_out=True).blob_id(name) for name in (edited, missing, linked)}
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
        snap = git.snapshot(checked_out=True)
        assert {sha.decode() for sha in loads} == {snap.blob_id(name) for name in inside}


def test_a_fifo_in_place_of_a_file_is_not_waited_on(store: Path, loads: list[bytes]) -> None:
    files = committed(store)
    name = "index/summary.json"
    (store / name).unlink()
    os.mkfifo(store / name)
    assert blob_loads(store, loads) == files
    assert len(loads) == 1


def test_a_folder_swapped_for_a_link_after_a_read_is_not_followed(
    store: Path, tmp_path: Path, loads: list[bytes]
) -> None:
    """The folder was a folder when first read from; the link put there afterwards is
    seen in the name of the file the open reached, and that file is not read."""
    files = committed(store)
    shards = sorted(name for name in files if name.startswith("index/catalog/"))
    assert len(shards) >= 2
    with GitStore(store) as git:
        snap = git.snapshot(checked_out=True)
        loads.clear()
        assert snap.read(shards[0]) == files[shards[0]] and loads == []
        catalog = store / "index" / "catalog"
        shutil.move(catalog, tmp_path / "moved")
        catalog.symlink_to(tmp_path / "moved", target_is_directory=True)
        assert [snap.read(name) for name in shards[1:]] == [files[n] for n in shards[1:]]
        assert {sha.decode() for sha in loads} == {snap.blob_id(n) for n in shards[1:]}


def test_a_path_that_leaves_the_store_is_never_opened(
    store: Path, tmp_path: Path, loads: list[bytes]
) -> None:
    """A commit made outside xbrain with an empty name first (a path that reads as
    absolute): the file outside, the very bytes, is not what is read."""
    outside = tmp_path / "secret.txt"
    outside.write_bytes(b"the committed bytes\n")
    name = str(outside)  # "/tmp/.../secret.txt": its first component is empty
    with GitStore(store) as git:
        head = git.head()
        new = git.commit(head, {name: outside.read_bytes()}, "odd\n", "t <t@t>", 0)
        snap = git.snapshot(checked_out=True)
        assert snap.commit == new
        loads.clear()
        assert snap.read(name) == outside.read_bytes()
        assert [sha.decode() for sha in loads] == [snap.blob_id(name)]
    checked = CheckedOut(str(store))
    blob = Blob.from_string(outside.read_bytes()).id
    opened: list[object] = []
    real = os.open
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "open", lambda *a, **k: opened.append(a[0]) or real(*a, **k))
        assert checked.read(os.fsencode(name), blob) is None
        assert checked.read(b"../" + os.fsencode(outside.name), blob) is None
        assert checked.read(b"index/../../" + os.fsencode(outside.name), blob) is None
        assert checked.read(b"index/..", blob) is None
    assert opened == []  # refused by name, before any open


def test_a_padded_file_is_read_from_git_once_and_never_read_whole(
    store: Path, loads: list[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    files = committed(store)
    name = "index/summary.json"
    with open(store / name, "ab") as handle:
        handle.truncate(16 << 20)  # past the bound: never read or hashed
    asked: list[int] = []
    real = os.read
    monkeypatch.setattr(os, "read", lambda fd, n: asked.append(n) or real(fd, n))
    with GitStore(store) as git:
        snap = git.snapshot(checked_out=True)
        loads.clear()
        assert [snap.read(name) for _ in range(3)] == [files[name]] * 3
        assert [sha.decode() for sha in loads] == [snap.blob_id(name)]
    assert max(asked, default=0) <= 1 << 20


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
        snap = git.snapshot(checked_out=True)
        assert {name: snap.read(name) for name in files} == files


@settings(max_examples=60, deadline=None)
@given(data=st.binary(max_size=5000))
def test_the_blob_id_is_gits(data: bytes) -> None:
    """One way to name a blob (``blob_sha``: the hand-edit check, a refresh, these reads):
    the id dulwich, and so git, gives the same bytes."""
    assert blob_sha(data) == Blob.from_string(data).id.decode()
    assert GitStore.hash_blob(data) == blob_sha(data)
