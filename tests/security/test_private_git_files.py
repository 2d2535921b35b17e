"""Every file of a store is private (0600, directories 0700), the files a plain git
command leaves in ``.git`` too (the new-user trial found ``.git/COMMIT_EDITMSG`` 0644):
git gives its objects, refs and index ``core.sharedRepository``'s 0600, but writes
``COMMIT_EDITMSG`` and ``FETCH_HEAD`` with the umask; the next xbrain write takes group
and other permissions off them, so ``doctor`` finds nothing."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import Result, make, write_json

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs the git binary")


def open_to_others(root: Path) -> list[str]:
    found = []
    for directory, dirs, names in os.walk(root):
        for name in [*dirs, *names]:
            path = Path(directory) / name
            if not path.is_symlink() and path.lstat().st_mode & 0o077:
                found.append(str(path.relative_to(root)))
    return sorted(found)


def test_a_write_makes_the_files_a_plain_git_command_left_private(
    xb_proc: Callable[..., Result], store_dir: Path, tmp_path: Path
) -> None:
    assert xb_proc("put", str(write_json(tmp_path / "a.json", [make("a")]))).code == 0
    other = tmp_path / "other"
    who = ["-c", "user.name=t", "-c", "user.email=t@x.invalid"]

    def git(*args: str, cwd: Path = store_dir) -> None:
        subprocess.run(
            ["git", "-C", str(cwd), *who, *args],
            check=True,
            capture_output=True,
            preexec_fn=lambda: os.umask(0o022),  # the usual umask, as a user's shell has
        )

    git("init", "-q", str(other), cwd=tmp_path)
    git("commit", "-q", "--allow-empty", "-m", "elsewhere", cwd=other)
    git("commit", "-q", "--allow-empty", "-m", "by hand")  # COMMIT_EDITMSG
    git("fetch", "-q", str(other))  # FETCH_HEAD
    assert open_to_others(store_dir) == [".git/COMMIT_EDITMSG", ".git/FETCH_HEAD"]

    assert xb_proc("put", str(write_json(tmp_path / "b.json", [make("b")]))).code == 0

    assert open_to_others(store_dir) == []
    assert (store_dir / ".git" / "COMMIT_EDITMSG").stat().st_mode & 0o777 == 0o600
    doctor = xb_proc("doctor")
    assert doctor.code == 0 and doctor.json["ok"] is True, doctor.stdout


def test_a_link_in_git_s_place_is_never_followed(
    xb_proc: Callable[..., Result], store_dir: Path, tmp_path: Path
) -> None:
    assert xb_proc("put", str(write_json(tmp_path / "a.json", [make("a")]))).code == 0
    outside = tmp_path / "outside.txt"
    outside.write_text("not the store's")
    outside.chmod(0o644)
    (store_dir / ".git" / "COMMIT_EDITMSG").symlink_to(outside)
    assert xb_proc("put", str(write_json(tmp_path / "b.json", [make("b")]))).code == 0
    assert outside.stat().st_mode & 0o777 == 0o644


def test_the_automatic_push_s_token_is_private(
    xb_proc: Callable[..., Result], store_dir: Path, tmp_path: Path
) -> None:
    """The background push of ``sync.auto`` (a process with the user's umask) wrote
    ``.git/xbrain/sync-push.token`` 0644."""
    bare = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    assert xb_proc("remote", "add", "origin", str(bare)).code == 0
    assert xb_proc("config", "sync.auto", "on").code == 0
    put = subprocess.run(
        [sys.executable, "-m", "xbrain", "put", "-", "--store", str(store_dir)],
        input=json.dumps([make("a")]),
        capture_output=True,
        text=True,
        env={**os.environ, "XBRAIN_SYNC_DEBOUNCE": "0.5"},
        preexec_fn=lambda: os.umask(0o022),
        timeout=120,
    )
    assert put.returncode == 0, put.stderr
    token = store_dir / ".git" / "xbrain" / "sync-push.token"
    for _ in range(200):  # the background push writes it as it starts
        if token.exists():
            break
        time.sleep(0.05)
    assert token.exists()
    assert token.stat().st_mode & 0o777 == 0o600
    assert open_to_others(store_dir) == []
