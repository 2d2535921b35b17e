"""Working-tree files without a repository: temp names, modes, pruning, the disk-full
error a refresh reports (the helpers of :mod:`.worktree`)."""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

from ..errors import XbrainError
from ..inputs import read_file

__all__ = [
    "MAX_WORKTREE_FILE",
    "WORKTREE_TEMP",
    "disk_full_refreshing",
    "file_mode",
    "file_mode_problems",
    "fix_file_modes",
    "prune_empty_dirs",
    "read_worktree_file",
    "regular_file",
    "worktree_temp",
]

WORKTREE_TEMP = ".xbrain-tmp"
MAX_WORKTREE_FILE = 64 * 1024 * 1024  # larger than any store file: read no further


def worktree_temp(target: Path) -> Path:
    """Where a working-tree file is written before it replaces ``target``: a fixed name,
    so a write killed there leaves a file the retry replaces; ``target``'s own name when
    the suffix fits beside it in a file name (255 bytes), else a digest of it."""
    name = f".{target.name}{WORKTREE_TEMP}"
    if len(os.fsencode(name)) > 255:
        digest = hashlib.sha256(os.fsencode(target.name)).hexdigest()[:32]
        name = f".{digest}{WORKTREE_TEMP}"
    return target.with_name(name)


def disk_full_refreshing(commit: str | None, catching_up: bool) -> XbrainError:
    """The error of a refresh the disk filled up during."""
    shown = commit[:12] if commit else "empty"
    if catching_up:
        return XbrainError(
            f"The disk is full: the working tree could not catch up with main "
            f"({shown}) after an earlier write, so nothing new was written. Free "
            "some space, then retry."
        )
    return XbrainError(
        f"The disk filled up while updating the working tree; the change is committed "
        f"(main is {shown}). Free some space, then run xbrain doctor --repair."
    )


def prune_empty_dirs(directory: Path, root: Path) -> None:
    """Remove ``directory`` and its parents up to ``root`` while they are empty."""
    while directory != root and directory.is_dir():
        try:
            directory.rmdir()
        except OSError:
            return
        directory = directory.parent


def file_mode_problems(root: Path) -> list[str]:
    """``root`` itself (``.``) and the files or directories under it that group or
    others can access."""
    problems = ["."] if file_mode(root) & 0o077 and not stat.S_ISLNK(file_mode(root)) else []
    for directory, dirs, names in os.walk(root):
        for name in [*dirs, *names]:
            path = os.path.join(directory, name)
            mode = os.lstat(path).st_mode
            if not stat.S_ISLNK(mode) and mode & 0o077:
                problems.append(os.path.relpath(path, root))
    return problems


def fix_file_modes(root: Path) -> None:
    """Remove group/other permissions under ``root``."""
    for rel in file_mode_problems(root):
        path = root / rel
        os.chmod(path, os.lstat(path).st_mode & 0o700)


def file_mode(path: Path) -> int:
    """``path``'s mode, its link not followed; 0 when there is nothing there."""
    try:
        return os.lstat(path).st_mode
    except OSError:
        return 0


def regular_file(path: Path) -> bool:
    """Whether ``path`` is a regular file (a link to one is not)."""
    return stat.S_ISREG(file_mode(path))


def read_worktree_file(path: Path, limit: int) -> bytes | None:
    """A regular file's bytes when it holds at most ``limit`` of them (links not followed).

    None for a link, a FIFO, a device, a directory, a missing or a larger file.
    """
    try:
        return read_file(path, limit, "", follow=False)
    except XbrainError:
        return None
