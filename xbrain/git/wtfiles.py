"""Working-tree files without a repository: temp names, modes, pruning, the disk-full
error a refresh reports, writing a refresh's files (the helpers of :mod:`.worktree`)."""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
from collections.abc import Callable
from pathlib import Path

from ..errors import XbrainError
from ..inputs import read_file

__all__ = [
    "MAX_WORKTREE_FILE",
    "THREADED",
    "WORKTREE_TEMP",
    "Job",
    "disk_full_refreshing",
    "file_mode",
    "file_mode_problems",
    "fix_file_modes",
    "place_files",
    "prune_empty_dirs",
    "read_worktree_file",
    "regular_file",
    "worktree_temp",
    "write_new",
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


def fix_file_modes(root: Path, replace: Callable[[str], bool] | None = None) -> None:
    """Remove group/other permissions under ``root``. A regular file ``replace`` names
    (one later rewritten in place) is copied to a new private file instead: a descriptor
    opened while others could read it keeps the old file, never what is written next."""
    for rel in file_mode_problems(root):
        path = root / rel
        mode = os.lstat(path).st_mode
        if replace is not None and stat.S_ISREG(mode) and replace(rel):
            data = read_worktree_file(path, MAX_WORKTREE_FILE)
            if data is not None:
                temp = worktree_temp(path)
                write_new(temp, data)
                os.replace(temp, path)
                continue
        os.chmod(path, mode & 0o700)


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


_THREADS = 2  # threads writing a big refresh's files (more only wait on directory locks)
THREADED = 64  # fewer files than this are written by the caller alone


Job = tuple[Path, bytes, str, bool]  # target, bytes, blob id, rewritten in place


def _place(job: Job, fresh: bool) -> os.stat_result:
    """Write one working-tree file unless it holds ``data`` already; its stat data."""
    target, data, _, in_place = job
    if fresh or not os.path.lexists(target):  # new: none to see half replaced
        write_new(target, data)  # (a kill here: the pending marker names it)
        return os.lstat(target)
    rewritten = rewrite_in_place(target, data) if in_place else None
    if rewritten is not None:
        return rewritten
    if read_worktree_file(target, len(data)) != data:
        temp = worktree_temp(target)
        write_new(temp, data)
        os.replace(temp, target)
    return os.lstat(target)


_IN_PLACE = os.O_RDWR | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0)


def rewrite_in_place(target: Path, data: bytes) -> os.stat_result | None:
    """Give ``target`` the bytes ``data`` in place when it is a private regular file of
    one link, this user's, mode 0600 exactly (its stat data after), else None: nothing
    done, the caller replaces it.
    No inode is made or freed (a file system without a journal scans the inodes freed in
    the last minutes at every inode it makes); a kill halfway leaves a file the pending
    marker names."""
    try:
        fd = os.open(target, _IN_PLACE)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        mine = info.st_uid == os.geteuid() and stat.S_IMODE(info.st_mode) == 0o600
        if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1 or not mine:
            return None
        if info.st_size == len(data) and os.pread(fd, len(data) + 1, 0) == data:
            return info
        view = memoryview(data)
        while view:
            view = view[os.pwrite(fd, view, len(data) - len(view)) :]
        os.ftruncate(fd, len(data))
        return os.fstat(fd)
    finally:
        os.close(fd)


def place_files(jobs: list[Job], fresh: bool) -> list[os.stat_result]:
    """:func:`_place` of every job; the stat data in the jobs' order. Many are written
    by a few threads, each a run of them in path order: a thread's files share their
    directories, and seldom one with another thread (threads creating files in the same
    directory wait on its lock, spinning)."""
    if len(jobs) < THREADED:
        return [_place(job, fresh) for job in jobs]
    from concurrent.futures import ThreadPoolExecutor

    order = sorted(range(len(jobs)), key=lambda i: jobs[i][0])
    size = -(-len(order) // _THREADS)
    runs = [order[at : at + size] for at in range(0, len(order), size)]
    placed: list[os.stat_result | None] = [None] * len(jobs)

    def place_run(run: list[int]) -> None:
        for i in run:
            placed[i] = _place(jobs[i], fresh)

    with ThreadPoolExecutor(_THREADS, thread_name_prefix="xbrain-files") as pool:
        list(pool.map(place_run, runs))
    return [info for info in placed if info is not None]  # each set: a failure raised


def write_new(path: Path, data: bytes) -> None:
    """Write a fresh private file; a link planted at ``path`` is removed, not followed."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(path)
        raise
