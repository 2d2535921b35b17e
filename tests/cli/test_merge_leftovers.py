"""What a killed background pack merge leaves (``xbrain-merge-*`` temporary files, an index
without its pack) is reported by ``doctor`` and removed by ``doctor --repair`` — only while
no merge runs: a running merge's files look the same, so they are left alone then."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Callable
from pathlib import Path

from tests.conftest import Result, make

Run = Callable[..., Result]


def leave_merge_files(store: Path) -> list[Path]:
    pack_dir = store / ".git" / "objects" / "pack"
    pack_dir.mkdir(parents=True, exist_ok=True)
    files = [pack_dir / "xbrain-merge-k1ll3d", pack_dir / f"pack-{'ab' * 20}.idx"]
    for path in files:
        path.write_bytes(b"half a merge" * 1000)
    return files


def test_doctor_reports_and_repairs_what_a_killed_merge_left(xb_proc: Run, store_dir: Path) -> None:
    put = xb_proc("put", "-", input=make("kept"))
    assert put.code == 0
    files = leave_merge_files(store_dir)
    report = xb_proc("doctor").json
    named = {p["path"] for p in report["problems"] if p["code"] == "pack_leftover"}
    assert named == {str(f.relative_to(store_dir)) for f in files}
    assert all(f.exists() for f in files)  # doctor without --repair changes nothing
    repaired = xb_proc("doctor", "--repair").json
    assert {p["path"] for p in repaired["repaired"] if p["code"] == "pack_leftover"} == named
    assert not any(f.exists() for f in files)
    assert xb_proc("doctor").json["ok"]
    assert xb_proc("get", put.json["results"][0]["id"]).code == 0


def test_a_running_merges_files_are_left_alone(xb_proc: Run, store_dir: Path) -> None:
    assert xb_proc("put", "-", input=make("kept")).code == 0
    files = leave_merge_files(store_dir)
    lock = store_dir / ".git" / "xbrain" / "packs.lock"
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # a merge is running: its files are not leftovers
        report = xb_proc("doctor", "--repair").json
        assert not [p for p in report["repaired"] if p["code"] == "pack_leftover"]
        assert all(f.exists() for f in files)
    finally:
        os.close(fd)
