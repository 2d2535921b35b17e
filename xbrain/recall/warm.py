"""After a hook ran out of time: build the recall indexes in a detached process.

Recall answers from three derived indexes (resources, skills, entries). A store they do
not reflect yet — just cloned, after a bulk import, on a new device — has them built by
its first recall, and that build can take longer than a hook may wait
(``XBRAIN_HOOK_TIMEOUT``). A hook cut off mid-build kept nothing, so every later prompt
timed out the same way and the agent never had its memory. When a hook times out and
an index is missing or behind ``main``, it starts one detached ``xbrain recall`` of a
word no record holds (it builds what is missing, shows nothing, so it leaves no
telemetry or session state); a lock held for that process's life keeps it to one at a
time. The next prompts answer in time.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from ..search.entrycache import CACHE_FILE, cache_meta
from ..search.query import INDEX_FILE, index_meta, main_head, open_current
from ..search.skills import SKILL_INDEX, skill_index_meta

__all__ = ["WARM_LOCK", "WARM_PROMPT", "behind", "start"]

WARM_LOCK = Path("xbrain") / "warm.lock"
WARM_PROMPT = b"xbrainwarmupnothingmatches\n"


def behind(control: Path) -> bool:
    """True when one of the recall indexes is missing, damaged or behind ``main``."""
    head = main_head(control)
    if head is None:
        return False
    for path, meta in (
        (INDEX_FILE, index_meta),
        (SKILL_INDEX, skill_index_meta),
        (CACHE_FILE, cache_meta),
    ):
        conn = open_current(control / path, meta(head))
        if conn is None:
            return True
        conn.close()
    return False


def start(store: Path) -> bool:
    """Start the detached build when an index needs it and none is running; True when
    one was started."""
    control = store / ".git"
    if not (control / "xbrain").is_dir() or not behind(control):
        return False
    import fcntl

    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(control / WARM_LOCK, flags, 0o600)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:  # another build holds it
        os.close(fd)
        return False
    try:
        # the child inherits the locked descriptor: the lock lasts as long as it runs
        child = subprocess.Popen(
            [sys.executable, "-m", "xbrain", "recall", "-", "--store", os.path.abspath(store)],
            # ``-m`` puts the folder it starts in first on the import path: a hook's is the
            # agent's project, so never that one
            cwd=os.sep,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # not killed with the hook's process group
            pass_fds=(fd,),
        )
        assert child.stdin is not None
        child.stdin.write(WARM_PROMPT)  # far below a pipe's buffer: never blocks
        child.stdin.close()
    except OSError:
        return False
    finally:
        os.close(fd)
    return True
