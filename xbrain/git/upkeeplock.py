"""The pack upkeep's own lock, and the detached process a large merge runs in.

A merge only adds a pack, then removes the packs (and loose copies) that pack holds, so
it does not need the store lock: a large one runs in a detached process after the write
that called for it, and the write returns. Two merges must not run at once (each would
remove packs the other is reading), nor a merge beside ``prune`` (which deletes every
pack but its own: a merge could bring back what it purged). Each of them takes
``.git/xbrain/packs.lock`` (``flock``): a write's upkeep tries it and moves on when it is
held; ``xbrain gc`` and ``prune`` wait for it. A write hands its lock to the process it
starts (the same open file), so the lock is never free between the two.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

__all__ = ["LOCK_NAME", "adopt", "detach", "upkeep_lock"]

LOCK_NAME = os.path.join("xbrain", "packs.lock")


@contextlib.contextmanager
def upkeep_lock(control_dir: Path, wait: bool) -> Iterator[int | None]:
    """Hold the upkeep lock of the repository at ``control_dir``: its file descriptor,
    or None (without ``wait``) when another process holds it."""
    path = control_dir / LOCK_NAME
    path.parent.mkdir(mode=0o700, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            yield None
            return
        yield fd
    finally:
        os.close(fd)


def detach(command: list[str], fd: int) -> None:
    """Start ``command`` in a session of its own with ``fd`` (the lock) inherited, no
    terminal and no output, never waited for: ``sh`` starts it in the background and
    exits at once (that is all that is waited for), so it runs as init's child and
    nothing is left for this process to reap (no zombie while it runs, no
    ``ResourceWarning: subprocess … is still running`` when this process ends first)."""
    subprocess.run(
        ["/bin/sh", "-c", '"$@" &', "sh", *command],
        cwd=os.sep,  # a ``python -m`` puts the folder it starts in first on the import path
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        pass_fds=(fd,),
        start_new_session=True,
        check=False,
    )


def adopt(fd: int) -> None:
    """In the detached process: check that ``fd`` is the upkeep lock it was handed
    (held: a second ``flock`` on the same open file succeeds at once)."""
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
