"""A multi-pack-index git wrote (``git multi-pack-index write``, ``git maintenance``)
never outlives a pack xbrain removes: whatever merges or removes packs (a write's pack
upkeep, ``xbrain gc``, a purge) first removes a multi-pack-index naming any of them, so
``git fsck --strict`` keeps passing. ``doctor`` reports one naming a pack that is gone
(``git_midx``) and ``--repair`` removes it.

Before: the merged packs were removed and the multi-pack-index left, and ``git fsck``
failed ("failed to load pack in position 0", exit 32).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import Result, make, write_json

pytestmark = [
    pytest.mark.compat,
    pytest.mark.skipif(shutil.which("git") is None, reason="the git binary is not installed"),
]

GIT_ENV = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}


def git(store: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "-C", str(store), *args], capture_output=True, text=True, env=GIT_ENV
    )


def pack_dir(store: Path) -> Path:
    return store / ".git" / "objects" / "pack"


def put_batch(xb_proc: Callable[..., Result], tmp_path: Path, tag: str, count: int) -> None:
    batch = write_json(tmp_path / f"{tag}.json", [make(f"{tag}{i}") for i in range(count)])
    result = xb_proc("put", str(batch))
    assert result.code == 0, result.stderr


@pytest.fixture
def indexed(xb_proc: Callable[..., Result], store_dir: Path, tmp_path: Path) -> Path:
    """A store of one pack and a multi-pack-index git wrote over it (with its bitmap
    when this git writes one)."""
    put_batch(xb_proc, tmp_path, "a", 100)
    assert len(list(pack_dir(store_dir).glob("*.pack"))) == 1
    written = git(store_dir, "multi-pack-index", "write", "--bitmap")
    if written.returncode != 0:
        written = git(store_dir, "multi-pack-index", "write")
    assert written.returncode == 0, written.stderr
    assert (pack_dir(store_dir) / "multi-pack-index").is_file()
    fsck_passes(store_dir)
    return store_dir


def fsck_passes(store: Path) -> None:
    checked = git(store, "fsck", "--strict")
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_gc_removes_a_multi_pack_index_naming_a_pack_it_merges(
    xb_proc: Callable[..., Result], indexed: Path, tmp_path: Path
) -> None:
    put_batch(xb_proc, tmp_path, "b", 3)  # loose objects: gc merges them and the pack
    before = set(pack_dir(indexed).glob("*.pack"))
    result = xb_proc("gc")
    assert result.code == 0, result.stderr
    assert before - set(pack_dir(indexed).glob("*.pack")), "gc merged no pack"
    assert not (pack_dir(indexed) / "multi-pack-index").exists()
    assert not list(pack_dir(indexed).glob("multi-pack-index-*"))  # its bitmap, its .rev
    fsck_passes(indexed)


def test_a_merging_write_removes_a_multi_pack_index_naming_a_merged_pack(
    xb_proc: Callable[..., Result], indexed: Path, tmp_path: Path
) -> None:
    before = set(pack_dir(indexed).glob("*.pack"))
    put_batch(xb_proc, tmp_path, "c", 100)  # a pack as large: the two are merged
    assert before - set(pack_dir(indexed).glob("*.pack")), "the write merged no pack"
    assert not (pack_dir(indexed) / "multi-pack-index").exists()
    fsck_passes(indexed)


def test_a_multi_pack_index_naming_no_merged_pack_stays(
    xb_proc: Callable[..., Result], indexed: Path, tmp_path: Path
) -> None:
    put_batch(xb_proc, tmp_path, "b", 3)  # a few loose objects: no pack merged
    assert (pack_dir(indexed) / "multi-pack-index").is_file()
    fsck_passes(indexed)


def test_doctor_reports_a_multi_pack_index_naming_a_missing_pack_and_repair_removes_it(
    xb_proc: Callable[..., Result], indexed: Path, tmp_path: Path
) -> None:
    # what an older xbrain left: the packs merged away under git's index
    midx = pack_dir(indexed) / "multi-pack-index"
    kept = midx.read_bytes()
    put_batch(xb_proc, tmp_path, "b", 100)  # the pack it names merged away
    midx.write_bytes(kept)
    midx.chmod(0o600)
    assert git(indexed, "fsck", "--strict").returncode != 0
    result = xb_proc("doctor")
    assert result.code == 7, result.stderr
    found = [p for p in json.loads(result.stdout)["problems"] if p["code"] == "git_midx"]
    assert [p["path"] for p in found] == [".git/objects/pack/multi-pack-index"]
    repaired = xb_proc("doctor", "--repair")
    assert repaired.code == 0, repaired.stdout + repaired.stderr
    assert [p["code"] for p in json.loads(repaired.stdout)["repaired"]] == ["git_midx"]
    assert not (pack_dir(indexed) / "multi-pack-index").exists()
    fsck_passes(indexed)
    assert xb_proc("doctor").code == 0


def test_a_purge_removes_a_multi_pack_index_naming_a_pack_it_deletes(
    xb_proc: Callable[..., Result], indexed: Path
) -> None:
    result = xb_proc("purge", "--text", "Fictional", "--yes")
    assert result.code == 0, result.stderr
    assert not (pack_dir(indexed) / "multi-pack-index").exists()
    fsck_passes(indexed)


def test_git_maintenance_incremental_repack_then_a_merging_write(
    xb_proc: Callable[..., Result], store_dir: Path, tmp_path: Path
) -> None:
    put_batch(xb_proc, tmp_path, "a", 100)
    ran = git(store_dir, "maintenance", "run", "--task=incremental-repack")
    if ran.returncode != 0:
        pytest.skip(f"git maintenance cannot run here: {ran.stderr.strip()}")
    assert (pack_dir(store_dir) / "multi-pack-index").is_file()
    put_batch(xb_proc, tmp_path, "c", 100)
    assert not (pack_dir(store_dir) / "multi-pack-index").exists()
    fsck_passes(store_dir)
    assert xb_proc("gc").code == 0
    fsck_passes(store_dir)
