"""Reading every record of a kind: in a helper process for big stores, serially for
small ones, the same records in the same order either way."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import make
from xbrain.core import View, bulk
from xbrain.errors import CorruptStoreError
from xbrain.kinds import resource as resource_kind
from xbrain.store import Store


@pytest.fixture
def store(tmp_path: Path, segment_cache: Path) -> Store:
    found = Store(tmp_path / "store", cache_dir=segment_cache)
    found.put([make(f"b{i}", text=f"body {i} 中文") for i in range(23)])
    return found


def read(store: Store, **progress: Any) -> list[dict[str, Any]]:
    with store.core.git() as git:
        return list(bulk.records(git, View(git.snapshot()), resource_kind.KIND.name, **progress))


def test_the_helper_process_reads_what_a_serial_read_reads(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    serial = read(store)
    assert len(serial) == 23 and all(r["id"].startswith("resource_") for r in serial)
    started: list[int] = []
    real = bulk._parallel

    def spy(*args: Any) -> Any:
        started.append(1)
        return real(*args)

    monkeypatch.setattr(bulk, "PARALLEL_MIN", 1)
    monkeypatch.setattr(bulk, "CHUNK", 4)
    monkeypatch.setattr(bulk.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(bulk, "_parallel", spy)
    steps: list[tuple[int, int]] = []
    parallel = read(store, progress=lambda step, total: steps.append((step, total)))
    assert started == [1]  # the helper process did the parsing
    assert parallel == serial
    assert sum(step for step, _ in steps) == 23 and {total for _, total in steps} == {23}


@pytest.mark.parametrize("helper", [False, True])
def test_a_damaged_record_is_one_clear_error_from_either_path(
    store: Store, monkeypatch: pytest.MonkeyPatch, helper: bool
) -> None:
    rid = read(store)[5]["id"]
    with store.core.transaction("test") as txn:  # a record no parser accepts
        txn.write(resource_kind.KIND.path(rid), b"id: [not, a, resource]\n")
    if helper:
        monkeypatch.setattr(bulk, "PARALLEL_MIN", 1)
        monkeypatch.setattr(bulk, "CHUNK", 4)
        monkeypatch.setattr(bulk.os, "cpu_count", lambda: 2)
    with pytest.raises(CorruptStoreError, match=rid):
        read(store)


def test_a_pool_that_cannot_start_falls_back_to_reading_here(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*args: Any, **kwargs: Any) -> None:
        raise OSError("no semaphores here")

    monkeypatch.setattr(bulk, "PARALLEL_MIN", 1)
    monkeypatch.setattr(bulk.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(bulk, "ProcessPoolExecutor", refuse)
    assert len(read(store)) == 23


def test_a_helper_that_dies_midway_leaves_the_rest_to_a_serial_read(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    from concurrent.futures.process import BrokenProcessPool

    serial = read(store)

    def dies_after_one(store_path: Path, commit: str, parse: Any, chunks: Any) -> Any:
        yield serial[: len(chunks[0])]  # the first chunk, then the helper is gone
        raise BrokenProcessPool("the helper was killed")

    monkeypatch.setattr(bulk, "PARALLEL_MIN", 1)
    monkeypatch.setattr(bulk, "CHUNK", 4)
    monkeypatch.setattr(bulk.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(bulk, "_parallel", dies_after_one)
    assert read(store) == serial
