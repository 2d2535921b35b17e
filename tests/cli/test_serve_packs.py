"""``xbrain serve`` keeps the store's repository open between requests: a repack by
another process in between is seen by the next served write, which maps none of the
packs it removed, and git finds the store as a fresh process leaves it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.cli.test_serve import cli, finished, runtime, start
from tests.conftest import make

__all__ = ["runtime"]  # the fixture, used here by name


def pack_maps(pid: int, store: Path) -> list[str]:
    maps = Path(f"/proc/{pid}/maps").read_text().splitlines()
    return [line for line in maps if f"{store}/.git/objects/pack/" in line]


def packs(store: Path) -> set[str]:
    return {p.name for p in (store / ".git" / "objects" / "pack").glob("*.pack")}


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads /proc/<pid>/maps")
def test_served_writes_see_a_repack_by_another_process(runtime: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"
    batch = tmp_path / "batch.json"
    batch.write_text(json.dumps([make(f"item-{i}") for i in range(80)]))
    assert cli(runtime, store, "put", str(batch)).returncode == 0  # a pack
    server = start(runtime, store)
    try:
        for i in range(2):
            one = tmp_path / f"one-{i}.json"
            one.write_text(json.dumps(make(f"served-{i}")))
            done = cli(runtime, store, "put", str(one))
            assert done.returncode == 0, done.stderr
        assert pack_maps(server.pid, store)  # read from the pack, kept open
        before = packs(store)
        repacked = subprocess.run(
            ["git", "-C", str(store), "repack", "-a", "-d", "-q"], capture_output=True
        )
        assert repacked.returncode == 0, repacked.stderr
        assert packs(store) and not packs(store) & before
        last = tmp_path / "last.json"
        last.write_text(json.dumps(make("served-last")))
        done = cli(runtime, store, "put", str(last))
        assert done.returncode == 0, done.stderr
        assert [line for line in pack_maps(server.pid, store) if "(deleted)" in line] == []
        assert json.loads(cli(runtime, store, "serve", "--stop").stdout)["stopped"] is True
        summary = finished(server)
    finally:
        server.kill()
        server.communicate()
    assert summary["served"] == 4  # three puts, then the stop
    listed = cli(runtime, store, "list", "--limit", "100")
    assert listed.returncode == 0, listed.stderr
    assert "served-last" in listed.stdout
    status = subprocess.run(
        ["git", "-C", str(store), "status", "--porcelain"], capture_output=True, text=True
    )
    assert status.returncode == 0 and status.stdout == ""
    fsck = subprocess.run(["git", "-C", str(store), "fsck", "--strict"], capture_output=True)
    assert fsck.returncode == 0, fsck.stderr
