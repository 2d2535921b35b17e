"""Leftovers of killed writes, a full disk and a read-only store (issue 11, items 10, 16)."""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, Result, head, make, write_json

Run = Callable[..., Result]


def _blob_ids(xb: Run, tmp_path: Path, item: dict[str, object]) -> set[str]:
    """The loose objects a put of ``item`` writes (learned on a scratch store)."""
    scratch = tmp_path / "scratch"
    xb("init", store=scratch)
    before = {p for p in (scratch / ".git" / "objects").rglob("*") if p.is_file()}
    assert xb("put", "-", input=item, store=scratch).code == 0
    after = {p for p in (scratch / ".git" / "objects").rglob("*") if p.is_file()}
    return {p.parent.name + p.name for p in after - before if len(p.parent.name) == 2}


def test_an_object_lock_left_by_a_killed_write_does_not_block_the_retry(
    xb: Run, tmp_path: Path, store_dir: Path
) -> None:
    """Before the fix the retry failed with Internal error (FileLocked) until doctor --repair."""
    xb("put", str(EXAMPLES / "batch.json"))
    item = make("killed-mid-write")
    locks = {}
    for sha in _blob_ids(xb, tmp_path, item):  # the resource's blob is the same everywhere
        lock = store_dir / ".git" / "objects" / sha[:2] / (sha[2:] + ".lock")
        lock.parent.mkdir(mode=0o700, exist_ok=True)
        lock.write_bytes(b"partial")
        locks[sha] = lock
    result = xb("put", "-", input=item)
    assert result.code == 0, result.stderr
    assert result.json["added"] == 1
    written = [
        sha for sha in locks if (store_dir / ".git" / "objects" / sha[:2] / sha[2:]).exists()
    ]
    assert written  # the retry wrote the very objects the killed write had locked
    assert all(not locks[sha].exists() for sha in written)
    for lock in locks.values():  # (trees and commits differ between stores)
        lock.unlink(missing_ok=True)
    report = xb("doctor").json
    assert report["ok"] is True, report["problems"]


def test_doctor_repair_removes_fresh_object_locks_under_the_store_lock(
    xb: Run, store_dir: Path
) -> None:
    xb("put", str(EXAMPLES / "batch.json"))
    lock = store_dir / ".git" / "objects" / "ab" / ("c" * 38 + ".lock")
    lock.parent.mkdir(mode=0o700, exist_ok=True)
    lock.write_bytes(b"")
    (found,) = [p for p in xb("doctor").json["problems"] if p["code"] == "git_lock"]
    assert "killed xbrain write" in found["message"]  # no write runs: it is a dead one's
    from xbrain.core.lock import StoreLock

    writer = StoreLock(store_dir / ".git" / "xbrain.lock")  # a write in progress
    assert writer.acquire(0)
    try:
        (found,) = [p for p in xb("doctor").json["problems"] if p["code"] == "git_lock"]
        assert "a writer holds it" in found["message"]
    finally:
        writer.release()
    repaired = xb("doctor", "--repair").json["repaired"]
    assert "git_lock" in {p["code"] for p in repaired} and not lock.exists()


# a put that stops for good once its first loose object's lock file is made: the moment
# a SIGKILL leaves that lock behind (each loose object is written through it: by dulwich,
# and by xbrain.git.loose, which syncs a commit's objects together)
PAUSED_PUT = """
import os, sys, time
import dulwich.object_store as objects
import xbrain.git.loose as loose
from xbrain.launch import main

real = objects.GitFile

def paused(path, mode="rb", **kwargs):
    opened = real(path, mode, **kwargs)
    if "w" in mode and len(os.path.basename(os.path.dirname(path))) == 2:
        print("locked", flush=True)
        time.sleep(600)
    return opened

objects.GitFile = loose.GitFile = paused
sys.argv = ["xbrain", *sys.argv[1:]]
main()
"""


def test_the_next_write_removes_the_object_locks_of_a_killed_write(
    xb: Run, xb_proc: Run, store_dir: Path, json_file: Callable[[object], str]
) -> None:
    """Issue 42, item 7: doctor said the next write removes a killed write's object locks,
    but only doctor --repair did; doctor exited 7 through every write in between."""
    import signal
    import sys

    assert xb("put", str(EXAMPLES / "batch.json")).code == 0
    command = [sys.executable, "-c", PAUSED_PUT, "put", json_file(make("killed")), "--store"]
    with subprocess.Popen([*command, str(store_dir)], stdout=subprocess.PIPE) as proc:
        try:
            assert proc.stdout is not None and proc.stdout.readline() == b"locked\n"
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=60)
    locks = [p for p in (store_dir / ".git" / "objects").rglob("*.lock") if p.parent.name != "pack"]
    assert len(locks) == 1  # what the killed write left
    (found,) = [p for p in xb("doctor").json["problems"] if p["code"] == "git_lock"]
    assert found["message"].endswith("the next write (or doctor --repair) removes it.")
    assert xb_proc("put", json_file(make("next"))).code == 0  # the light path, a real process
    assert not locks[0].exists()
    report = xb_proc("doctor")
    assert report.code == 0, report.stdout


def test_a_lock_no_killed_write_named_is_left_to_doctor_repair(xb: Run, store_dir: Path) -> None:
    """An object lock no write's marker names (an older xbrain's, or planted): doctor
    says what removes it, and that stays true after a write."""
    xb("put", str(EXAMPLES / "batch.json"))
    lock = store_dir / ".git" / "objects" / "ab" / ("c" * 38 + ".lock")
    lock.parent.mkdir(mode=0o700, exist_ok=True)
    lock.write_bytes(b"")
    assert xb("put", "-", input=make("after")).code == 0
    (found,) = [p for p in xb("doctor").json["problems"] if p["code"] == "git_lock"]
    assert found["message"] == "Left by a killed xbrain write; doctor --repair removes it."
    assert lock.exists() and xb("doctor", "--repair").code == 0 and not lock.exists()


@contextlib.contextmanager
def tmpfs(path: Path, size: str) -> Iterator[Path]:
    path.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], capture_output=True
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {done.stderr.decode().strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def _fill(directory: Path) -> Path:
    filler = directory / "filler"
    with contextlib.suppress(OSError), open(filler, "wb") as handle:
        while True:
            handle.write(b"\0" * 65536)
    return filler


needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="mounting a small tmpfs needs root")


@needs_root
def test_a_full_disk_is_one_clear_line_and_the_store_stays_usable(
    xb_proc: Run, tmp_path: Path
) -> None:
    with tmpfs(tmp_path / "small", "3m") as disk:
        store = disk / "store"
        assert xb_proc("put", str(EXAMPLES / "batch.json"), store=store).code == 0
        assert xb_proc("search", "dialog", store=store).code == 0  # the index exists
        filler = _fill(disk)
        big = [make(f"full-{i}", text=f"{i} " + os.urandom(8000).hex()) for i in range(40)]
        source = write_json(tmp_path / "big.json", big)
        before = head(store)
        result = xb_proc("put", str(source), store=store)
        assert result.code == 1, result.stderr
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and "disk" in lines[0], result.stderr
        assert "Traceback" not in result.stderr and "Exception ignored" not in result.stderr
        committed = head(store) != before
        assert ("is committed" in lines[0]) == committed
        # reads still answer on a full disk (the index cannot grow: searched in memory)
        assert xb_proc("status", store=store).code == 0
        found = xb_proc("search", "dialog", store=store)
        assert found.code == 0 and found.json["results"], found.stderr
        recalled = xb_proc("recall", "-", "--session", "s", input="react dialog", store=store)
        assert recalled.code == 0 and recalled.json["results"], recalled.stderr
        # a full disk is not a damaged index (before: "damaged", and --repair deleted it)
        codes = {p["code"] for p in xb_proc("doctor", store=store).json["problems"]}
        assert "search_index" not in codes
        rebuilt = xb_proc("reindex", store=store)  # before: Internal error (OperationalError)
        assert rebuilt.code == 1 and rebuilt.stderr.startswith("Local index: "), rebuilt.stderr
        assert len(rebuilt.stderr.strip().splitlines()) == 1
        # loose objects: dulwich's lock file, collected after its flush failed, printed
        # "Exception ignored in … _GitFile.__del__" and a traceback under the line
        skill = tmp_path / "skill"
        skill.mkdir()
        (skill / "SKILL.md").write_text("---\nname: full\ndescription: d\n---\nbody\n")
        rule = {"kind": "rule", "name": "full", "queries": ["disk full"], "body": "b"}
        for command, given in (
            (("skill", "save", str(skill)), None),
            (("entry", "put", "-"), rule),
        ):
            refused = xb_proc(*command, input=given, store=store)
            assert refused.code == 1 and refused.stderr.count("\n") == 1, refused.stderr
            assert "disk is full" in refused.stderr
        filler.unlink()
        retry = xb_proc("put", str(source), store=store)
        assert retry.code == 0, retry.stderr
        assert xb_proc("doctor", "--repair", store=store).code in (0, 7)
        assert xb_proc("doctor", store=store).json["ok"] is True


@needs_root
def test_search_and_log_work_on_a_read_only_store(xb_proc: Run, tmp_path: Path) -> None:
    with tmpfs(tmp_path / "ro", "8m") as disk:
        store = disk / "store"
        assert xb_proc("put", str(EXAMPLES / "batch.json"), store=store).code == 0
        for derived in (store / ".git" / "xbrain").glob("*.sqlite*"):
            derived.unlink()  # nothing derived yet: both must build it somewhere
        subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
        found = xb_proc("search", "dialog", store=store)
        assert found.code == 0 and found.json["results"], found.stderr
        log = xb_proc("log", store=store)
        assert log.code == 0 and log.json["commits"], log.stderr
        put = xb_proc("put", "-", input=make("ro"), store=store)
        assert put.code != 0 and len(put.stderr.strip().splitlines()) == 1
        assert "Traceback" not in put.stderr


@needs_root
def test_recall_and_skill_recall_answer_from_a_read_only_store(
    xb_proc: Run, tmp_path: Path
) -> None:
    """A store an agent's sandbox mounts read-only: before the fix, recall (and the
    hooks built on it) failed with "Read-only file system: …/entries.sqlite"."""
    skill = tmp_path / "skill"
    skill.mkdir()
    (skill / "SKILL.md").write_text(
        "---\nname: dialog-review\ndescription: Review a React dialog for keyboard focus\n"
        "---\nSteps.\n"
    )
    rule = {
        "kind": "rule",
        "name": "dialog-focus",
        "description": "Dialogs must trap keyboard focus",
        "body": "Trap focus in React dialogs.",
        "oneLiner": "Trap focus.",
        "queries": ["react dialog focus"],
        "updatedAt": "2026-01-01T00:00:00Z",
    }
    with tmpfs(tmp_path / "ro", "8m") as disk:
        store = disk / "store"
        assert xb_proc("put", str(EXAMPLES / "batch.json"), store=store).code == 0
        assert xb_proc("skill", "save", str(skill), store=store).code == 0
        assert xb_proc("entry", "put", "-", input=rule, store=store).code == 0
        asked = xb_proc("recall", "-", "--session", "w", input="react dialog focus", store=store)
        assert asked.code == 0 and asked.json["results"]  # telemetry recorded
        for derived in (store / ".git" / "xbrain").glob("*.sqlite*"):
            if not derived.name.startswith("telemetry"):
                derived.unlink()  # nothing derived yet: recall must build it somewhere
        subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
        report = xb_proc("telemetry", store=store)  # read as it is
        assert report.code == 0 and report.json["entries"], report.stderr
        cleared = xb_proc("telemetry", "--clear", store=store)
        assert cleared.code == 1 and "Cannot erase the telemetry here" in cleared.stderr
        # doctor only reads: the store lock it cannot even try is no failure
        assert xb_proc("doctor", store=store).json["ok"] is True
        assert len(cleared.stderr.strip().splitlines()) == 1
        recalled = xb_proc(
            "recall", "-", "--session", "s-1", input="react dialog focus", store=store
        )
        assert recalled.code == 0, recalled.stderr
        shown = [(r["kind"], r["name"], r["disclosure"]) for r in recalled.json["results"]]
        assert shown[:2] == [
            ("rule", "dialog-focus", "full"),
            ("skill", "dialog-review", "pointer"),
        ]
        assert recalled.json["results"][0]["text"] == "Trap focus in React dialogs."
        assert any(kind == "resource" for kind, _, _ in shown)
        level0 = xb_proc("skill", "recall", "dialog", store=store)
        assert level0.code == 0 and [r["slug"] for r in level0.json["results"]] == [
            "dialog-review"
        ], level0.stderr
        level1 = xb_proc("skill", "recall", "--slug", "dialog-review", store=store)
        assert level1.code == 0 and "Steps." in level1.stdout, level1.stderr
        payload = {"hook_event_name": "UserPromptSubmit", "prompt": "react dialog focus"}
        hooked = xb_proc("hook", "claude-code", input=payload, store=store)
        assert hooked.code == 0 and "Trap focus in React dialogs." in hooked.stdout
