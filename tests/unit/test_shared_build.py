"""A whole store's index build shared with a helper process gives exactly the index a
serial build gives, whatever goes wrong with the helper or its scratch file."""

from __future__ import annotations

import functools
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import make
from tests.unit.test_index_build import tables
from xbrain.core import View, bulk
from xbrain.errors import CorruptStoreError
from xbrain.kinds import resource as resource_kind
from xbrain.search import build
from xbrain.search.index import SearchIndex
from xbrain.search.skills import skill_fields
from xbrain.store import Store

WORDS = [
    "keyboard",
    "focus",
    "dialog",
    "目录",
    "文件",
    "排序",
    "sorted",
    "time",
    "list",
    "时间",
    "列出目录内容",
]


@pytest.fixture
def store(tmp_path: Path, segment_cache: Path) -> Store:
    found = Store(tmp_path / "store", cache_dir=segment_cache)
    found.put(
        [
            make(f"s{i}", title=f"{WORDS[i % 11]} guide", text=" ".join(WORDS[i % 7 :: 2]))
            for i in range(47)
        ]
    )
    return found


def index_file(store: Store) -> Path:
    return store.core.path / ".git" / "xbrain" / "search.sqlite"


def built(store: Store) -> dict[str, list[tuple[Any, ...]]]:
    """Rebuild the index; its content."""
    assert store.reindex()["reindexed"] == 47
    with sqlite3.connect(index_file(store)) as conn:
        return tables(conn)


def shared(monkeypatch: pytest.MonkeyPatch) -> list[tuple[bool, Any]]:
    """Make every build big enough to share, in chunks of 5; what each build's
    ``bulk.process`` returned (did the helper do a share, and what it reported)."""
    monkeypatch.setattr(bulk, "PARALLEL_MIN", 1)
    monkeypatch.setattr(bulk, "WORK_CHUNK", 5)
    monkeypatch.setattr(bulk.os, "cpu_count", lambda: 2)
    returned: list[tuple[bool, Any]] = []
    real = bulk.process

    def spy(*args: Any, **kwargs: Any) -> tuple[bool, Any]:
        returned.append(real(*args, **kwargs))
        return returned[-1]

    monkeypatch.setattr(bulk, "process", spy)
    return returned


def scratch_files(store: Store) -> list[Path]:
    return sorted((store.core.path / ".git" / "xbrain").glob("build-*"))


def test_a_shared_build_is_the_serial_build(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    serial = built(store)
    returned = shared(monkeypatch)

    loaded = SearchIndex.rebuild

    def serially(index: SearchIndex, *args: Any, **kwargs: Any) -> int:
        if index.fields is skill_fields:  # the skill index is one bulk load of its own
            return loaded(index, *args, **kwargs)
        raise AssertionError("the shared build fell back to a serial one")

    monkeypatch.setattr(SearchIndex, "rebuild", serially)
    steps: list[tuple[int, int]] = []
    assert store.reindex(lambda step, total: steps.append((step, total)))["reindexed"] == 47
    with sqlite3.connect(index_file(store)) as conn:
        assert tables(conn) == serial
        assert conn.execute("SELECT COUNT(*) FROM docs").fetchone()[0] == 47
    [(helped, (count, _))] = returned  # the helper indexed a share, not all
    assert helped and 0 < count < 47
    assert sum(step for step, _ in steps) == 47 and {total for _, total in steps} == {47}
    assert scratch_files(store) == []
    assert store.search("keyboard guide")["results"]


def test_a_damaged_record_in_the_helpers_share_is_one_clear_error(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    with store.core.git() as git:
        rids = [r["id"] for r in bulk.records(git, View(git.snapshot()), "resource")]
    victim = rids[0]  # the first chunk: the helper's, as it is handed chunks first
    with store.core.transaction("test") as txn:
        txn.write(resource_kind.KIND.path(victim), b"id: [not, a, resource]\n")
    shared(monkeypatch)
    with pytest.raises(CorruptStoreError, match=victim):
        store.reindex()
    assert scratch_files(store) == []


def test_one_id_in_two_files_falls_back_to_the_serial_rule(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    with store.core.git() as git:
        snap = git.snapshot()
        first = next(bulk.records(git, View(snap), "resource"))
        data = snap.read(resource_kind.KIND.path(first["id"]))
    twin = "resource_" + "f" * 64  # sorts last: another file holding the first record
    with store.core.transaction("test") as txn:
        assert data is not None
        txn.write(resource_kind.KIND.path(twin), data)
    monkeypatch.setattr(bulk, "PARALLEL_MIN", 10**9)
    store.reindex()
    with sqlite3.connect(index_file(store)) as conn:
        serial = tables(conn)
    shared(monkeypatch)
    store.reindex()
    with sqlite3.connect(index_file(store)) as conn:
        assert tables(conn) == serial
    assert scratch_files(store) == []


def test_a_helper_file_that_does_not_hold_the_helpers_rows_is_not_trusted(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    serial = built(store)
    returned = shared(monkeypatch)
    real = bulk.process

    def lying(*args: Any, **kwargs: Any) -> tuple[bool, Any]:
        done, (count, totals) = real(*args, **kwargs)
        assert done
        return True, (count + 1, totals)  # as if the helper had written into another file

    monkeypatch.setattr(bulk, "process", lying)
    assert store.reindex()["reindexed"] == 47
    with sqlite3.connect(index_file(store)) as conn:
        assert tables(conn) == serial
    assert returned and scratch_files(store) == []


def test_a_helper_that_cannot_start_leaves_the_build_to_this_process(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    serial = built(store)
    returned = shared(monkeypatch)
    monkeypatch.setattr(bulk, "_pool", lambda *args: None)
    assert built(store) == serial
    assert returned == [(False, None)]


def test_a_helper_that_dies_leaves_its_chunks_to_this_process(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    serial = built(store)
    returned = shared(monkeypatch)
    # the helper dies at the end (os._exit: no clean-up, as a kill)
    monkeypatch.setattr(bulk, "_helper_finish", functools.partial(os._exit, 1))
    assert built(store) == serial
    assert returned == [(False, None)] and scratch_files(store) == []


def test_the_scratch_file_of_a_killed_build_is_cleared_and_a_live_ones_is_kept(
    store: Store,
) -> None:
    code = "import os; print(os.getpid())"
    gone = subprocess.run([sys.executable, "-c", code], text=True, capture_output=True, check=True)
    directory = store.core.path / ".git" / "xbrain"
    directory.mkdir(exist_ok=True)
    dead = directory / f"build-{int(gone.stdout)}-0a0b0c0d.sqlite"
    live = directory / f"build-{os.getpid()}-01020304.sqlite"
    for path in (dead, live):
        path.write_bytes(b"")
    stuck = directory / f"build-{int(gone.stdout)}-0e0f1011.sqlite"
    stuck.mkdir()  # a leftover that cannot be removed does not stop the build
    built(store)
    assert not dead.exists() and live.exists() and stuck.is_dir()


def test_the_helper_writes_only_into_the_file_it_was_given(tmp_path: Path) -> None:
    missing = tmp_path / "gone.sqlite"
    with pytest.raises(sqlite3.OperationalError):
        build._Helper(missing, tmp_path)
    assert not missing.exists()
