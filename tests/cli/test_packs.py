"""Pack upkeep (issue 45): packs stay few, loose objects get packed, xbrain gc merges
everything; kills and concurrent readers never lose an object."""

from __future__ import annotations

import random
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Result, make
from xbrain.git import packs
from xbrain.store import Store

HAS_GIT = shutil.which("git") is not None


def pack_files(store: Path) -> list[Path]:
    return sorted((store / ".git" / "objects" / "pack").glob("*.pack"))


def loose_files(store: Path) -> list[Path]:
    objects = store / ".git" / "objects"
    return [f for d in objects.iterdir() if len(d.name) == 2 for f in d.iterdir()]


def fsck(store: Path) -> None:
    if HAS_GIT:
        subprocess.run(
            ["git", "-C", str(store), "fsck", "--strict", "--no-progress", "--full"],
            check=True,
            capture_output=True,
        )


def batches(store: Store, count: int, size: int, tag: str) -> None:
    """``count`` batch puts of ``size`` new resources (each more objects than go loose)."""
    for b in range(count):
        store.put([make(f"{tag}-{b}-{i}") for i in range(size)])


def without_upkeep(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(packs.Packs, "keep_packs", lambda self, records=None: False)


def test_batch_puts_keep_few_packs(store_dir: Path) -> None:
    """Every batch adds a pack; the write after merges the small ones geometrically,
    so 12 batches leave a handful (12 before the upkeep), and every record stays."""
    store = Store(store_dir)
    batches(store, 12, 70, "b")
    assert 1 <= len(pack_files(store_dir)) <= 4, pack_files(store_dir)
    assert store.status()["resources"] == 12 * 70
    fsck(store_dir)
    assert store.doctor()["ok"]


def test_geometric_split() -> None:
    assert packs.geometric_split([]) == 0
    assert packs.geometric_split([100]) == 0
    assert packs.geometric_split([100, 300]) == 0  # 300 ≥ 2 × 100: kept as they are
    assert packs.geometric_split([100, 150]) == 2
    assert packs.geometric_split([10, 10, 100, 1000]) == 2  # only the two smallest
    assert packs.geometric_split([10, 30, 70, 1000]) == 3  # 70 < 2 × 40


def test_loose_objects_are_packed_then_pruned_by_a_later_consolidation(
    store_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Loose objects are packed once they pile up, and their loose copies removed only
    by the next consolidation, after the pack that holds them has landed."""
    store = Store(store_dir)
    store.put([make("first")])
    first = set(loose_files(store_dir))
    assert first and not pack_files(store_dir)
    monkeypatch.setattr(packs, "_LOOSE_LIMIT", -1)  # always "too many"
    monkeypatch.setattr(packs, "_LOOSE_PACK_MIN", 1)
    store.put([make("second")])
    assert pack_files(store_dir)  # packed ...
    assert first <= set(loose_files(store_dir))  # ... and still loose
    store.put([make("third")])
    assert not first & set(loose_files(store_dir))  # gone once a later one ran
    assert store.status()["resources"] == 3
    fsck(store_dir)


def test_gc_merges_everything_into_one_pack(
    xb_proc: Callable[..., Result],
    store_dir: Path,
    json_file: Callable[[Any], str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    without_upkeep(monkeypatch)
    store = Store(store_dir)
    batches(store, 5, 70, "g")
    store.put([make("single")])
    assert len(pack_files(store_dir)) == 5 and loose_files(store_dir)
    before = store_dir.joinpath(".git", "objects")
    size = sum(p.stat().st_size for p in before.rglob("*") if p.is_file())
    result = xb_proc("gc")
    assert result.code == 0, result.stderr
    assert result.json["before"]["packs"] == 5 and result.json["before"]["loose"] > 0
    assert result.json["after"] == {
        "packs": 1,
        "keptPacks": 0,
        "packBytes": pack_files(store_dir)[0].stat().st_size,
        "loose": 0,
        "looseBytes": 0,
    }
    assert result.json["after"]["packBytes"] < size  # with deltas
    assert len(pack_files(store_dir)) == 1 and not loose_files(store_dir)
    fsck(store_dir)
    assert xb_proc("put", json_file(make("after-gc"))).json["added"] == 1
    doctor = xb_proc("doctor").json
    assert doctor["ok"], doctor["problems"]
    assert doctor["checked"]["objects"]["packs"] == 1
    assert doctor["checked"]["objects"]["loose"] > 0  # the put after gc
    assert Store(store_dir).status()["resources"] == 5 * 70 + 2


def test_gc_without_a_store_is_not_found(xb_proc: Callable[..., Result], store_dir: Path) -> None:
    result = xb_proc("gc")
    assert result.code == 3
    assert result.stderr.strip().startswith("No store at")
    assert not store_dir.exists()


def spawn(store: Path, *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "xbrain", *args, "--store", str(store)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


@pytest.mark.slow
def test_sigkill_during_consolidation_loses_nothing(
    store_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A consolidation killed at random points: every object stays (fsck --strict),
    every record reads, and the next write succeeds and consolidates again."""
    without_upkeep(monkeypatch)
    store = Store(store_dir)
    rng = random.Random(45)
    batches(store, 6, 70, "seed")
    probe = shutil.copytree(store_dir, store_dir.with_name("probe"))
    started = time.monotonic()
    assert spawn(probe, "gc").wait(timeout=120) == 0
    duration = time.monotonic() - started
    expected = 6 * 70
    for round_ in range(8):
        batches(store, 2, 70, f"r{round_}")
        expected += 2 * 70
        proc = spawn(store_dir, "gc")
        time.sleep(rng.uniform(0.0, duration * 1.2))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        fsck(store_dir)
        assert Store(store_dir).status()["resources"] == expected
        exported = Store(store_dir).export_store(store_dir.with_name(f"e{round_}.json"))
        assert exported["resources"] == expected
        report = Store(store_dir).doctor()
        assert report["ok"] or {p["code"] for p in report["problems"]} == {"pack_leftover"}
    monkeypatch.undo()
    Store(store_dir).put([make("after")])  # removes any leftover, merges what piled up
    assert not [p for p in pack_files(store_dir) if not p.with_suffix(".idx").exists()]
    assert len(pack_files(store_dir)) <= 4
    fsck(store_dir)
    report = Store(store_dir).doctor()
    assert report["ok"], report["problems"]


@pytest.mark.slow
def test_readers_in_fresh_processes_never_fail_while_packs_are_consolidated(
    store_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fresh processes reading every record through git while packs are merged (the
    upkeep after each batch, and xbrain gc): not one read fails."""
    store = Store(store_dir)
    batches(store, 4, 70, "seed")
    stop = threading.Event()
    failures: list[str] = []
    runs = [0]

    def read() -> None:
        target = store_dir.with_name("export.json")
        command = [sys.executable, "-m", "xbrain", "export-store", str(target), "--force"]
        while not stop.is_set():
            proc = subprocess.run([*command, "--store", str(store_dir)], capture_output=True)
            runs[0] += 1
            if proc.returncode != 0:
                failures.append(proc.stderr.decode())

    readers = [threading.Thread(target=read) for _ in range(2)]
    for thread in readers:
        thread.start()
    try:
        for round_ in range(6):
            batches(store, 2, 70, f"c{round_}")
            assert spawn(store_dir, "gc").wait(timeout=120) == 0
    finally:
        stop.set()
        for thread in readers:
            thread.join(timeout=120)
    assert runs[0] >= 2
    assert failures == []
    fsck(store_dir)


@pytest.mark.slow
def test_sigkill_during_a_git_index_update_is_finished_by_the_next_write(
    store_dir: Path, tmp_path: Path
) -> None:
    """Puts killed late (where the working tree and the git index are refreshed, the
    index edited in place): no object is lost, the next write finishes the refresh, and
    git then sees a clean, valid index."""
    import json

    store = Store(store_dir)
    batches(store, 3, 300, "i")  # an index of about a thousand entries
    item = tmp_path / "item.json"
    rng = random.Random(2)
    item.write_text(json.dumps(make("probe")))
    started = time.monotonic()
    assert spawn(store_dir, "put", str(item)).wait(timeout=120) == 0
    duration = time.monotonic() - started
    for round_ in range(8):
        item.write_text(json.dumps(make(f"k{round_}")))
        proc = spawn(store_dir, "put", str(item))
        time.sleep(rng.uniform(duration * 0.5, duration * 1.1))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        fsck(store_dir)
        assert Store(store_dir).put([make(f"after-{round_}")])["added"] == 1
        if HAS_GIT:
            status = subprocess.run(
                ["git", "-C", str(store_dir), "status", "--porcelain", "--untracked-files=all"],
                capture_output=True,
                text=True,
                check=True,
            )
            assert status.stdout == ""
        report = Store(store_dir).doctor()
        assert report["ok"], report["problems"]


def git_pack_of_random_bytes(store: Path, size: int, seed: int) -> None:
    """A pack of one unreachable blob of ``size`` random bytes, written by git itself."""
    data = random.Random(seed).randbytes(size)
    git = ["git", "-C", str(store)]
    sha = subprocess.run([*git, "hash-object", "--stdin"], input=data, capture_output=True)
    subprocess.run([*git, "hash-object", "-w", "--stdin"], input=data, check=True)
    prefix = store / ".git" / "objects" / "pack" / "pack"
    pack = [*git, "pack-objects", "-q", str(prefix)]
    subprocess.run(pack, input=sha.stdout, check=True, capture_output=True)


@pytest.mark.skipif(not HAS_GIT, reason="git makes the packs")
def test_the_upkeep_merges_packs_past_four_megabytes_too(store_dir: Path) -> None:
    """Packs of every size are merged geometrically after a write (a store loaded in
    batches of 1,000 has packs of several MB each: before, those were left to xbrain
    gc, and .git grew to 6.6x the records); unreachable objects are kept."""
    store = Store(store_dir)
    store.put([make("first")])
    for seed, size in ((1, 5 << 20), (2, 3 << 20), (3, 3 << 20)):
        git_pack_of_random_bytes(store_dir, size, seed)
    assert len(pack_files(store_dir)) == 3
    ids = subprocess.run(
        ["git", "-C", str(store_dir), "cat-file", "--batch-all-objects", "--batch-check"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()[::3]
    batches(store, 1, 70, "after")
    wait_for_upkeep(store_dir)  # a merge past 4 MB runs detached
    assert len(pack_files(store_dir)) == 1, [p.stat().st_size for p in pack_files(store_dir)]
    fsck(store_dir)
    for sha in ids:
        subprocess.run(["git", "-C", str(store_dir), "cat-file", "-e", sha], check=True)
    assert store.status()["resources"] == 71
    assert store.doctor()["ok"]


def wait_for_upkeep(store: Path) -> None:
    """Until no detached pack upkeep runs (it holds the upkeep lock until it exits)."""
    from xbrain.git.upkeeplock import upkeep_lock

    with upkeep_lock(store / ".git", wait=True):
        pass


def test_a_large_merge_runs_detached_while_the_write_returns(
    store_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A merge past the inline bound runs in a detached process holding the upkeep lock
    (handed over by the write, so no other merge starts meanwhile); the writes go on
    and every record stays."""
    monkeypatch.setattr(packs, "_INLINE_MAX", 0)  # every merge detached
    store = Store(store_dir)
    for b in range(6):
        batches(store, 1, 70, f"d{b}")
    wait_for_upkeep(store_dir)
    store.put([make("last")])
    wait_for_upkeep(store_dir)
    assert 1 <= len(pack_files(store_dir)) <= 3, pack_files(store_dir)
    assert not [p for p in (store_dir / ".git" / "objects" / "pack").iterdir() if "merge" in p.name]
    assert store.status()["resources"] == 6 * 70 + 1
    fsck(store_dir)
    assert store.doctor()["ok"]


def upkeep(store: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "xbrain.git.upkeep", str(store)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


@pytest.mark.slow
def test_sigkill_of_a_detached_upkeep_while_writes_go_on_loses_nothing(
    store_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A detached upkeep (no store lock) killed at random points while batches are
    written beside it: no object lost (fsck --strict), every record reads, and the next
    upkeep removes what the killed one left and merges again."""
    without_upkeep(monkeypatch)
    store = Store(store_dir)
    rng = random.Random(46)
    batches(store, 6, 70, "seed")
    probe = shutil.copytree(store_dir, store_dir.with_name("probe"))
    started = time.monotonic()
    assert upkeep(probe).wait(timeout=120) == 0
    duration = time.monotonic() - started
    expected = 6 * 70
    for round_ in range(8):
        proc = upkeep(store_dir)
        batches(store, 1, 70, f"w{round_}")  # a write beside the merge
        expected += 70
        time.sleep(rng.uniform(0.0, duration))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        fsck(store_dir)
        assert Store(store_dir).status()["resources"] == expected
        exported = Store(store_dir).export_store(store_dir.with_name(f"e{round_}.json"))
        assert exported["resources"] == expected
        report = Store(store_dir).doctor()
        assert report["ok"] or {p["code"] for p in report["problems"]} == {"pack_leftover"}
    assert upkeep(store_dir).wait(timeout=120) == 0
    pack_dir = store_dir / ".git" / "objects" / "pack"
    assert not [p for p in pack_dir.iterdir() if p.name.startswith("xbrain-merge-")]
    assert all(p.with_suffix(".pack").exists() for p in pack_dir.glob("*.idx"))
    monkeypatch.undo()
    Store(store_dir).put([make("after")])
    wait_for_upkeep(store_dir)
    assert len(pack_files(store_dir)) <= 4
    fsck(store_dir)
    report = Store(store_dir).doctor()
    assert report["ok"], report["problems"]
    assert Store(store_dir).status()["resources"] == expected + 1
