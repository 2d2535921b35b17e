"""The store lock: exclusive across processes, compatible with filelock, private."""

from __future__ import annotations

import errno
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import make
from xbrain.core.lock import StoreLock


def test_a_second_holder_waits_then_gets_it(tmp_path: Path) -> None:
    path = tmp_path / "xbrain.lock"
    first, second = StoreLock(path), StoreLock(path)
    assert first.acquire(0)
    assert not second.acquire(0.1)
    first.release()
    assert second.acquire(0)
    second.release()
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600


def test_filelock_and_this_lock_exclude_each_other(tmp_path: Path) -> None:
    """An older xbrain (filelock) and this one never write at the same time."""
    from filelock import FileLock, Timeout

    path = tmp_path / "xbrain.lock"
    ours = StoreLock(path)
    assert ours.acquire(0)
    with pytest.raises(Timeout):
        FileLock(str(path)).acquire(timeout=0)
    ours.release()
    theirs = FileLock(str(path))
    theirs.acquire(timeout=0)
    assert not StoreLock(path).acquire(0)
    theirs.release()


def test_another_process_holding_it_makes_us_wait(tmp_path: Path) -> None:
    path = tmp_path / "xbrain.lock"
    code = (
        "import sys, time; from pathlib import Path; from xbrain.core.lock import StoreLock\n"
        f"lock = StoreLock(Path({str(path)!r})); assert lock.acquire(0)\n"
        "print('held', flush=True); sys.stdin.readline()"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        assert not StoreLock(path).acquire(0.2)
    finally:
        holder.communicate("\n", timeout=10)
    assert StoreLock(path).acquire(0)


def test_a_filesystem_without_flock_is_a_clear_error_not_a_weaker_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import fcntl

    from xbrain.errors import XbrainError

    def refuse(fd: int, op: int) -> None:
        raise OSError(errno.ENOSYS, "flock not supported")

    monkeypatch.setattr(fcntl, "flock", refuse)
    with pytest.raises(XbrainError, match="cannot lock files"):
        StoreLock(tmp_path / "xbrain.lock").acquire(0)


def test_a_link_or_fifo_planted_as_the_lock_is_refused_and_not_followed(tmp_path: Path) -> None:
    from xbrain.errors import CorruptStoreError

    outside = tmp_path / "outside.txt"
    outside.write_text("keep")
    link = tmp_path / "link.lock"
    link.symlink_to(outside)
    with pytest.raises(CorruptStoreError, match="not a regular file"):
        StoreLock(link).acquire(0)
    assert outside.read_text() == "keep"  # never opened for writing, never truncated
    fifo = tmp_path / "fifo.lock"
    os.mkfifo(fifo)
    with pytest.raises(CorruptStoreError, match="not a regular file"):
        StoreLock(fifo).acquire(0)


def test_a_planted_lock_link_is_one_line_through_the_cli(xb: Any, store_dir: Path) -> None:
    assert xb("init").code == 0
    marker = (store_dir / "xbrain.yaml").read_bytes()
    (store_dir / ".git" / "xbrain.lock").unlink(missing_ok=True)
    (store_dir / ".git" / "xbrain.lock").symlink_to(store_dir / "xbrain.yaml")
    result = xb("put", "-", input=make("lock"))
    assert result.code == 7 and "not a regular file" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert (store_dir / "xbrain.yaml").read_bytes() == marker
