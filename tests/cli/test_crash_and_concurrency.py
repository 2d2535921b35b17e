"""SIGKILL at random moments and several writers at once never corrupt the store."""

from __future__ import annotations

import json
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import make
from xbrain.store import Store

pytestmark = pytest.mark.slow


def spawn(store: Path, *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "xbrain", *args, "--store", str(store)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def git_status(store: Path) -> str:
    return subprocess.run(
        ["git", "-C", str(store), "status", "--porcelain", "--untracked-files=all"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def test_sigkill_during_batch_put_leaves_old_or_new_commit(tmp_path: Path) -> None:
    store_dir = tmp_path / "store"
    store = Store(store_dir)
    store.put([make("seed")])
    rng = random.Random(20261130)
    # How long one batch takes here, so kills land everywhere inside it.
    probe = tmp_path / "probe.json"
    probe.write_text(json.dumps([make(f"probe-{i}") for i in range(300)]))
    started = time.monotonic()
    assert spawn(store_dir, "put", str(probe)).wait(timeout=120) == 0
    duration = time.monotonic() - started
    expected = 301
    outcomes = {"old": 0, "new": 0}
    for round_ in range(10):
        batch = tmp_path / f"batch-{round_}.json"
        batch.write_text(json.dumps([make(f"r{round_}-{i}") for i in range(300)]))
        proc = spawn(store_dir, "put", str(batch))
        time.sleep(rng.uniform(0.0, duration * 1.1))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        # Readable at once, without any repair, and never a partial batch.
        count = store.status()["resources"]
        assert count in (expected, expected + 300), count
        outcomes["new" if count == expected + 300 else "old"] += 1
        expected = count
        # The next write finishes any interrupted working-tree refresh.
        follow = Store(store_dir).put([make(f"follow-{round_}")])
        assert follow["added"] == 1
        expected += 1
        if shutil.which("git"):
            assert git_status(store_dir) == ""
        report = store.doctor()
        assert report["ok"], report["problems"]
    print("crash outcomes", outcomes)
    assert sum(outcomes.values()) == 10


def test_sigkill_then_doctor_repair(tmp_path: Path) -> None:
    store_dir = tmp_path / "store"
    Store(store_dir).put([make("seed")])
    batch = tmp_path / "batch.json"
    batch.write_text(json.dumps([make(f"k{i}") for i in range(500)]))
    rng = random.Random(7)
    for _ in range(4):
        proc = spawn(store_dir, "put", str(batch))
        time.sleep(rng.uniform(0.05, 0.6))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        result = Store(store_dir).doctor(repair=True)
        assert result["ok"], result["problems"]
        if Store(store_dir).status()["resources"] == 501:
            break


def test_concurrent_writers(tmp_path: Path) -> None:
    store_dir = tmp_path / "store"
    Store(store_dir).init()
    procs = []
    for worker in range(6):
        batch = tmp_path / f"w{worker}.json"
        batch.write_text(json.dumps([make(f"w{worker}-{i}") for i in range(20)]))
        procs.append(spawn(store_dir, "put", str(batch), "--wait", "60"))
    for _ in range(3):
        procs.append(spawn(store_dir, "status"))
    assert [proc.wait(timeout=120) for proc in procs] == [0] * len(procs)
    store = Store(store_dir)
    assert store.status()["resources"] == 120
    assert store.doctor()["ok"]


def test_concurrent_skill_saves_with_one_expected_head_let_exactly_one_win(
    tmp_path: Path,
) -> None:
    store_dir = tmp_path / "store"
    folder = tmp_path / "s0"
    folder.mkdir()
    (folder / "SKILL.md").write_text("---\nname: runbook\ndescription: d\n---\nv0\n")
    head = Store(store_dir).skill_save(folder)["revision_id"]
    procs = []
    for worker in range(5):
        edit = tmp_path / f"s{worker + 1}"
        edit.mkdir()
        (edit / "SKILL.md").write_text(f"---\nname: runbook\ndescription: d\n---\nv{worker + 1}\n")
        args = ("skill", "save", str(edit), "--expect-revision", head, "--wait", "60")
        procs.append(spawn(store_dir, *args))
    codes = sorted(proc.wait(timeout=120) for proc in procs)
    assert codes == [0, 5, 5, 5, 5]  # the others saw a moved head: stale, nothing written
    store = Store(store_dir)
    assert [r["revision_number"] for r in store.skill_log("runbook")["revisions"]] == [2, 1]
    assert store.doctor()["ok"] and git_status(store_dir) == ""


def test_concurrent_first_writes_create_one_store(tmp_path: Path) -> None:
    store_dir = tmp_path / "fresh"
    procs = []
    for worker in range(4):
        item = tmp_path / f"i{worker}.json"
        item.write_text(json.dumps(make(f"first-{worker}")))
        procs.append(spawn(store_dir, "put", str(item), "--wait", "60"))
    assert [proc.wait(timeout=120) for proc in procs] == [0] * 4
    assert Store(store_dir).status()["resources"] == 4
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".fresh.init-")]


def test_busy_without_wait_fails_cleanly(tmp_path: Path) -> None:
    store_dir = tmp_path / "store"
    Store(store_dir).init()
    procs = []
    for worker in range(5):
        batch = tmp_path / f"b{worker}.json"
        batch.write_text(json.dumps([make(f"b{worker}-{i}") for i in range(100)]))
        procs.append(spawn(store_dir, "put", str(batch)))
    codes = [proc.wait(timeout=120) for proc in procs]
    assert set(codes) <= {0, 6} and 0 in codes
    assert Store(store_dir).status()["resources"] == 100 * codes.count(0)
    assert Store(store_dir).doctor()["ok"]
