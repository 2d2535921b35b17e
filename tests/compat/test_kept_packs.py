"""A pack git marked ``.keep`` (``git gc --cruft``, ``touch pack-X.keep``) is counted by
``xbrain gc`` and ``doctor`` like every pack (``packs``; ``keptPacks`` says how many of
them are kept), and is never merged nor removed: by ``gc``, nor by a write's upkeep.

Before: ``gc`` and ``doctor`` counted only the packs without ``.keep`` (``packs: 1``
beside a kept pack, or ``packs: 0`` when the only pack was kept).
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


def git(store: Path, *args: str, input: str | None = None) -> str:
    done = subprocess.run(
        ["git", "-C", str(store), *args], capture_output=True, text=True, env=GIT_ENV, input=input
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def put_batch(xb_proc: Callable[..., Result], tmp_path: Path, tag: str, count: int) -> None:
    batch = write_json(tmp_path / f"{tag}.json", [make(f"{tag}{i}") for i in range(count)])
    result = xb_proc("put", str(batch))
    assert result.code == 0, result.stderr


def pack_files(store: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in (store / ".git" / "objects" / "pack").iterdir()}


@pytest.fixture
def kept(xb_proc: Callable[..., Result], store_dir: Path, tmp_path: Path) -> dict[str, bytes]:
    """A store whose packs git wrote (``gc --cruft``: a pack, and a cruft pack of an
    unreachable object), the first of them marked ``.keep``; the kept pack's files."""
    put_batch(xb_proc, tmp_path, "a", 100)
    git(store_dir, "hash-object", "-w", "--stdin", input="nothing reaches me\n")
    git(store_dir, "gc", "--cruft", "--prune=never", "-q")
    pack_dir = store_dir / ".git" / "objects" / "pack"
    packs = sorted(pack_dir.glob("*.pack"))
    assert len(packs) == 2  # the objects main reaches, and the cruft pack
    keep = next(p for p in packs if not p.with_suffix(".mtimes").exists())
    keep.with_suffix(".keep").touch(0o600)
    return {name: data for name, data in pack_files(store_dir).items() if keep.stem in name}


def test_gc_counts_a_kept_pack_and_leaves_it_as_it_is(
    xb_proc: Callable[..., Result], store_dir: Path, tmp_path: Path, kept: dict[str, bytes]
) -> None:
    put_batch(xb_proc, tmp_path, "b", 3)  # loose objects for gc to pack
    result = xb_proc("gc")
    assert result.code == 0, result.stderr
    report = result.json
    assert report["before"]["packs"] == 2 and report["before"]["keptPacks"] == 1
    assert report["after"]["packs"] == 2 and report["after"]["keptPacks"] == 1
    after = pack_files(store_dir)
    assert {name: after.get(name) for name in kept} == kept  # not merged, not removed
    git(store_dir, "fsck", "--strict")
    doctor = xb_proc("doctor")
    assert doctor.code == 0, doctor.stdout + doctor.stderr
    objects = json.loads(doctor.stdout)["checked"]["objects"]
    assert objects["packs"] == 2 and objects["keptPacks"] == 1


def test_a_merging_write_leaves_a_kept_pack_as_it_is(
    xb_proc: Callable[..., Result], store_dir: Path, tmp_path: Path, kept: dict[str, bytes]
) -> None:
    for tag in ("b", "c", "d"):  # packs enough to merge (the kept one takes no part)
        put_batch(xb_proc, tmp_path, tag, 100)
    after = pack_files(store_dir)
    others = [name for name in after if name.endswith(".pack") and name not in kept]
    assert len(others) < 4, "no pack was merged"  # the cruft pack and three writes'
    assert {name: after.get(name) for name in kept} == kept
    git(store_dir, "fsck", "--strict")


def test_gc_counts_a_store_whose_only_pack_is_kept(
    xb_proc: Callable[..., Result], store_dir: Path, tmp_path: Path
) -> None:
    put_batch(xb_proc, tmp_path, "a", 100)
    (pack,) = (store_dir / ".git" / "objects" / "pack").glob("*.pack")
    pack.with_suffix(".keep").touch(0o600)
    result = xb_proc("gc")
    assert result.code == 0, result.stderr
    before, after = result.json["before"], result.json["after"]
    assert before["packs"] == 1 and before["keptPacks"] == 1
    assert after["keptPacks"] == 1 and after["packs"] == 1 + (before["loose"] > 0)
    assert pack.exists()
