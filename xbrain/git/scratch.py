"""Scratch directories a process owns while it runs.

Each is ``<pid>-<random>`` under a private root the caller names (a store's
``.git/xbrain/…``, the user's cache directory), removed on every way out of the block;
one a killed process left behind is removed by the next process that makes one there,
once its pid is provably gone.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from .objects import private_umask

__all__ = ["scratch_dir", "sweep_dead"]


@contextlib.contextmanager
def scratch_dir(root: Path | None) -> Iterator[Path]:
    """A new private directory under ``root``, removed afterwards whatever happens;
    first, those of processes that are gone are removed. ``root`` None: one in the
    system's temporary directory (``xbrain-…``), which nothing sweeps."""
    if root is not None:
        sweep_dead(root)
    with private_umask():
        if root is not None:
            root.mkdir(parents=True, exist_ok=True)
        prefix = f"{os.getpid()}-" if root is not None else "xbrain-"
        work = Path(tempfile.mkdtemp(prefix=prefix, dir=root))
    try:
        yield work
    finally:
        shutil.rmtree(work, ignore_errors=True)


def sweep_dead(scratch: Path) -> None:
    """Remove ``<pid>-…`` scratch directories whose process is gone (killed mid-way)."""
    if not scratch.is_dir():
        return
    for entry in scratch.iterdir():
        pid = entry.name.split("-", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(entry, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (OSError, OverflowError):  # another user's, or no pid at all: not ours to clear
        return True
    return True
