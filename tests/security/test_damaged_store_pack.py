"""A damaged pack of the store itself (bytes flipped inside it, its header overwritten,
the file cut in half, its index damaged) is corruption for every command that meets
it: one line on stderr, exit 7, nothing written. ``doctor`` never crashes on it: it
reports the damaged pack (exit 7, as for any problem it finds); ``gc`` refuses rather
than saying ok.

Before: a flip gave ``Internal error (BufferError)`` (closing the repository while the
error's traceback still held a view of the pack's map), a bad header or a cut pack
``Internal error (AssertionError)`` (dulwich's words), and ``gc`` printed ``"ok": true``.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import Result, make
from xbrain.store import Store


def flip(data: bytearray) -> bytearray:
    for at in (len(data) // 3, len(data) // 2, 2 * len(data) // 3):
        for i in range(at, at + 8):
            data[i] ^= 0xFF
    return data


def header(data: bytearray) -> bytearray:
    data[:4] = b"XACK"
    return data


def truncate(data: bytearray) -> bytearray:
    return data[: len(data) // 2]


DAMAGE = {"flip": flip, "header": header, "truncate": truncate}


@pytest.fixture(scope="module")
def packed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small store after ``xbrain gc``: one pack, nothing loose."""
    store_dir = tmp_path_factory.mktemp("packed") / "store"
    store = Store(store_dir)
    store.put([make(f"r{i}", title=f"Record number {i}") for i in range(40)])
    store.gc()
    packs = list((store_dir / ".git" / "objects" / "pack").glob("*.pack"))
    assert len(packs) == 1
    return store_dir


def damaged(packed: Path, tmp_path: Path, how: str, suffix: str = ".pack") -> Path:
    copy = tmp_path / "copy"
    shutil.copytree(packed, copy, symlinks=True)
    (target,) = (copy / ".git" / "objects" / "pack").glob(f"*{suffix}")
    target.chmod(0o600)
    target.write_bytes(bytes(DAMAGE[how](bytearray(target.read_bytes()))))
    return copy


def files(store: Path) -> dict[str, tuple[int, int]]:
    """Every file of the store's git directory: its size and modification time."""
    return {
        str(path.relative_to(store)): (path.stat().st_size, path.stat().st_mtime_ns)
        for path in sorted((store / ".git").rglob("*"))
        if path.is_file() and "xbrain" not in path.relative_to(store / ".git").parts
    }


def one_corrupt_line(result: Result) -> None:
    assert result.code == 7, result.stderr
    assert "Internal error" not in result.stderr
    assert "damaged" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr


# a damaged header or a cut pack fails every read; flipped bytes, the reads of the
# objects they hit (the records, read by status and reindex)
CASES = [
    *(
        (how, command)
        for how in ("header", "truncate")
        for command in ("status", "skill list", "log", "reindex")
    ),
    ("flip", "status"),
    ("flip", "reindex"),
]


@pytest.mark.parametrize(("how", "command"), CASES)
def test_a_command_on_a_damaged_pack_says_so_in_one_line(
    xb_proc: Callable[..., Result], packed: Path, tmp_path: Path, how: str, command: str
) -> None:
    store = damaged(packed, tmp_path, how)
    before = files(store)
    one_corrupt_line(xb_proc(*command.split(), store=store))
    assert files(store) == before


@pytest.mark.parametrize("how", sorted(DAMAGE))
def test_backup_of_a_damaged_pack_is_refused_and_writes_no_file(
    xb_proc: Callable[..., Result], packed: Path, tmp_path: Path, how: str
) -> None:
    store = damaged(packed, tmp_path, how)
    target = tmp_path / "out" / "backup.bundle"
    target.parent.mkdir()
    result = xb_proc("backup", "create", str(target), store=store)
    one_corrupt_line(result)
    assert not target.exists()
    assert list(target.parent.iterdir()) == []  # nor its temporary file


@pytest.mark.parametrize("how", sorted(DAMAGE))
def test_gc_refuses_a_damaged_pack_and_changes_nothing(
    xb_proc: Callable[..., Result], packed: Path, tmp_path: Path, how: str
) -> None:
    store = damaged(packed, tmp_path, how)
    before = files(store)
    result = xb_proc("gc", store=store)
    one_corrupt_line(result)
    assert result.stdout == ""
    assert files(store) == before


def test_gc_refuses_a_damaged_pack_index(
    xb_proc: Callable[..., Result], packed: Path, tmp_path: Path
) -> None:
    store = damaged(packed, tmp_path, "flip", suffix=".idx")
    before = files(store)
    one_corrupt_line(xb_proc("gc", store=store))
    assert files(store) == before


@pytest.mark.parametrize("how", sorted(DAMAGE))
def test_doctor_reports_the_damaged_pack_and_does_not_crash(
    xb_proc: Callable[..., Result], packed: Path, tmp_path: Path, how: str
) -> None:
    store = damaged(packed, tmp_path, how)
    (pack,) = (store / ".git" / "objects" / "pack").glob("*.pack")
    result = xb_proc("doctor", store=store)
    assert result.code == 7, result.stderr
    assert "Internal error" not in result.stderr
    report = json.loads(result.stdout)
    assert report["ok"] is False
    found = [p for p in report["problems"] if p["code"] == "git_pack"]
    assert [p["path"] for p in found] == [str(pack.relative_to(store))]
    assert "damaged" in found[0]["message"].lower() or "header" in found[0]["message"]


def test_doctor_finds_no_damage_in_a_sound_pack(
    xb_proc: Callable[..., Result], packed: Path
) -> None:
    result = xb_proc("doctor", store=packed)
    assert result.code == 0, result.stdout + result.stderr
    assert json.loads(result.stdout)["problems"] == []


def test_a_damaged_trailer_stays_exit_7(
    xb_proc: Callable[..., Result], packed: Path, tmp_path: Path
) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(packed, copy, symlinks=True)
    (pack,) = (copy / ".git" / "objects" / "pack").glob("*.pack")
    pack.chmod(0o600)
    data = bytearray(pack.read_bytes())
    data[-5] ^= 0xFF
    pack.write_bytes(bytes(data))
    one_corrupt_line(xb_proc("status", store=copy))
    one_corrupt_line(xb_proc("gc", store=copy))


@pytest.mark.parametrize("kind", ["garbage", "link"])
def test_doctor_repair_removes_an_unreadable_multi_pack_index(
    xb_proc: Callable[..., Result], packed: Path, tmp_path: Path, kind: str
) -> None:
    store = tmp_path / "copy"
    shutil.copytree(packed, store, symlinks=True)
    midx = store / ".git" / "objects" / "pack" / "multi-pack-index"
    outside = tmp_path / "outside"
    outside.write_bytes(b"MIDX not really\n")
    if kind == "link":
        midx.symlink_to(outside)
    else:
        midx.write_bytes(outside.read_bytes())
    result = xb_proc("doctor", store=store)
    assert result.code == 7, result.stderr
    found = [p for p in json.loads(result.stdout)["problems"] if p["code"] == "git_midx"]
    assert [p["path"] for p in found] == [".git/objects/pack/multi-pack-index"]
    repaired = xb_proc("doctor", "--repair", store=store)
    assert repaired.code == 0, repaired.stdout + repaired.stderr
    assert not os.path.lexists(midx)
    assert outside.read_bytes() == b"MIDX not really\n"  # a link's target untouched
    assert xb_proc("status", store=store).code == 0


def test_a_sound_pack_of_one_tiny_object_is_no_damage(tmp_path: Path) -> None:
    """git's pack of one one-byte blob is 42 bytes (less than 20 of entries): sound."""
    import subprocess

    from xbrain.git.packcheck import pack_damage

    if shutil.which("git") is None:
        pytest.skip("the git binary is not installed (make test installs it)")
    repo = tmp_path / "r"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    blob = subprocess.run(
        ["git", "-C", str(repo), "hash-object", "-w", "--stdin"],
        input=b"x",
        capture_output=True,
        check=True,
    ).stdout
    base = tmp_path / "tiny"
    subprocess.run(
        ["git", "-C", str(repo), "pack-objects", "-q", str(base)], input=blob, check=True
    )
    (pack,) = tmp_path.glob("tiny-*.pack")
    assert pack.stat().st_size < 52
    assert pack_damage(pack) is None
