"""The cross-process store lock: an advisory ``flock`` on ``.git/xbrain.lock``.

On POSIX this is the same lock ``filelock`` takes (so processes using either exclude each
other), taken with the standard library: importing ``filelock`` costs a fresh process about
three times Python's own start-up (its package loads logging, inspect, decimal, …), and
every write would pay it. Where there is no ``fcntl`` (Windows), ``filelock`` does the
work. A filesystem that refuses ``flock`` is an error, not a silently weaker lock.
"""

from __future__ import annotations

import errno
import os
import stat
import time
import warnings
from pathlib import Path
from typing import Any

from ..errors import CorruptStoreError, XbrainError

__all__ = ["StoreLock"]

POLL = 0.05


class StoreLock:
    """An exclusive lock on one file, released on ``release`` or process exit."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None
        self._fallback: Any = None

    def acquire(self, wait: float) -> bool:
        """Take the lock, polling up to ``wait`` seconds; False when it stayed busy."""
        try:
            import fcntl
        except ImportError:  # not POSIX
            return self._acquire_portably(wait)
        deadline = time.monotonic() + max(wait, 0.0)
        fd = self._open()
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    os.close(fd)
                    return False
                time.sleep(POLL)
                continue
            except OSError as exc:
                os.close(fd)
                if exc.errno in (errno.ENOSYS, errno.EOPNOTSUPP):
                    raise XbrainError(
                        "This filesystem cannot lock files (no flock); keep the store on a "
                        "local disk."
                    ) from None
                raise
            except BaseException:
                os.close(fd)
                raise
            self._fd = fd
            return True

    def _open(self) -> int:
        """The lock file, created private; a link or a non-file planted there is refused."""
        refused = CorruptStoreError(
            f"{self.path} is not a regular file (a link or device planted there?); remove it "
            "and retry — xbrain makes only a plain file there."
        )
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK, 0o600)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENXIO, errno.EISDIR):
                raise refused from None
            raise
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise refused
        return fd

    def _acquire_portably(self, wait: float) -> bool:
        from filelock import FileLock, Timeout

        lock = FileLock(str(self.path), timeout=wait, mode=0o600)
        try:
            with warnings.catch_warnings():  # its notice of a soft lock is not one line
                warnings.simplefilter("ignore")
                lock.acquire(timeout=wait, poll_interval=POLL)
        except Timeout:
            return False
        self._fallback = lock
        return True

    def release(self) -> None:
        """Let the next process in."""
        if self._fd is not None:
            import fcntl

            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None
        if self._fallback is not None:
            self._fallback.release()
            self._fallback = None
