"""A commit's loose objects are synced together (issue 45 item 4): every object is on
disk before any is renamed into place, and all are before ``main`` moves; a write killed
among the renames leaves a store the next write and ``git fsck --strict`` accept."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import Result, head, make

Run = Callable[..., Result]


def test_every_object_is_synced_before_any_is_renamed_and_the_ref_moves_last(
    xb: Run, store_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert xb("put", "-", input=make("first")).code == 0
    events: list[str] = []
    objects = str(store_dir / ".git" / "objects")
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        target = os.readlink(f"/proc/self/fd/{fd}")
        if target.startswith(objects):
            events.append("sync")
        elif target.endswith(("refs/heads/main.lock", "refs/heads/main")):
            events.append("sync ref")
        real_fsync(fd)

    def replace(src: str | bytes, dst: str | bytes, **kwargs: object) -> None:
        name = os.fsdecode(dst)
        if name.startswith(objects) and "/pack/" not in name:
            events.append("rename")
        elif name.endswith("refs/heads/main"):
            events.append("ref")
        real_replace(src, dst)

    if not Path("/proc/self/fd").is_dir():
        pytest.skip("no /proc to name a file descriptor's file")
    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    assert xb("put", "-", input=make("second")).code == 0
    objects_done = events.index("ref")
    renames = [i for i, e in enumerate(events[:objects_done]) if e == "rename"]
    syncs = [i for i, e in enumerate(events[:objects_done]) if e == "sync"]
    assert len(renames) >= 3 and len(syncs) == len(renames)  # a blob, its trees, the commit
    assert max(syncs) < min(renames)  # all on disk before any is visible by name
    assert "rename" not in events[objects_done:]


# a put that stops for good once the first of its objects is renamed into place (the
# others still lock files): the moment a SIGKILL leaves the objects half placed
PAUSED_AMONG_RENAMES = """
import sys, time
import xbrain.git.loose as loose
from xbrain.launch import main

real = loose.GitFile
placed = []

def paused(path, mode="rb", **kwargs):
    opened = real(path, mode, **kwargs)
    close = opened.close

    def closing():
        close()
        placed.append(path)
        if len(placed) == 1:
            print("placed", flush=True)
            time.sleep(600)

    opened.close = closing
    return opened

loose.GitFile = paused
sys.argv = ["xbrain", *sys.argv[1:]]
main()
"""


def test_a_write_killed_among_its_renames_leaves_a_store_the_next_write_accepts(
    xb: Run, xb_proc: Run, store_dir: Path, json_file: Callable[[object], str]
) -> None:
    if shutil.which("git") is None:
        pytest.skip("the git binary is not installed (make test installs it)")
    assert xb("put", "-", input=make("first")).code == 0
    before = head(store_dir)
    command = [sys.executable, "-c", PAUSED_AMONG_RENAMES, "put", json_file(make("killed"))]
    with subprocess.Popen([*command, "--store", str(store_dir)], stdout=subprocess.PIPE) as proc:
        try:
            assert proc.stdout is not None and proc.stdout.readline() == b"placed\n"
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=60)
    assert head(store_dir) == before  # main never moved
    locks = [p for p in (store_dir / ".git" / "objects").rglob("*.lock") if p.parent.name != "pack"]
    assert locks  # the objects not yet renamed
    written = xb_proc("put", json_file(make("killed")))
    assert written.code == 0, written.stderr
    assert written.json["results"][0]["status"] == "added"
    assert not [p for p in (store_dir / ".git" / "objects").rglob("*.lock") if p.exists()]
    fsck = subprocess.run(
        ["git", "-C", str(store_dir), "fsck", "--strict"], capture_output=True, text=True
    )
    assert fsck.returncode == 0, fsck.stdout + fsck.stderr
    assert xb_proc("doctor").code == 0


# a put that stops for good halfway through writing a new working-tree file (created in
# place, without a temp file: main has moved, the pending marker names the file)
PAUSED_NEW_FILE = """
import os, sys, time
import xbrain.git.wtfiles as wtfiles
from xbrain.launch import main

def half(path, data):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    os.write(fd, data[: len(data) // 2])
    print("half", flush=True)
    time.sleep(600)

wtfiles.write_new = half
sys.argv = ["xbrain", *sys.argv[1:]]
main()
"""


def test_a_new_working_tree_file_half_written_by_a_killed_write_is_finished_by_the_next(
    xb: Run, xb_proc: Run, store_dir: Path, json_file: Callable[[object], str]
) -> None:
    if shutil.which("git") is None:
        pytest.skip("the git binary is not installed (make test installs it)")
    assert xb("put", "-", input=make("first")).code == 0
    command = [sys.executable, "-c", PAUSED_NEW_FILE, "put", json_file(make("killed"))]
    with subprocess.Popen([*command, "--store", str(store_dir)], stdout=subprocess.PIPE) as proc:
        try:
            assert proc.stdout is not None and proc.stdout.readline() == b"half\n"
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=60)
    assert xb_proc("put", json_file(make("next"))).code == 0
    status = subprocess.run(
        ["git", "-C", str(store_dir), "status", "--porcelain"], capture_output=True, text=True
    )
    assert status.returncode == 0 and status.stdout == ""
    got = xb_proc("list")
    assert got.code == 0 and got.json["total"] == 3
    assert xb_proc("doctor").code == 0


def test_new_working_tree_files_are_created_in_place_and_changed_ones_replaced(
    xb: Run, store_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file that is not there yet needs no temp file and rename (a reader cannot see it
    half replaced); a file that changes is still replaced whole."""
    assert xb("put", "-", input=make("first")).code == 0
    renamed: list[str] = []
    real = os.replace

    def replace(src: str | bytes, dst: str | bytes, **kwargs: object) -> None:
        name = os.fsdecode(dst)
        if not name.startswith(str(store_dir / ".git")):
            renamed.append(os.path.relpath(name, store_dir))
        real(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    assert xb("put", "-", input=[make(f"new-{i}") for i in range(5)]).code == 0
    assert [p for p in renamed if p.startswith("resources/")] == []
    changed = make("first", title="A new title", updatedAt="2030-01-01T00:00:00.000Z")
    (result,) = xb("put", "-", input=changed).json["results"]
    assert [p for p in renamed if p.startswith("resources/")] == [
        next(p for p in renamed if result["id"] in p)
    ]
