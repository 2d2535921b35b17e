"""What a remote was last seen holding (``refs/remotes/NAME/main``), recorded even when a
killed process left that ref's lock file behind.

Pushes and fetches record the remote's head after the network part is done, without the
store's write lock, so dulwich's lock file is the only guard between two of them. A live
writer holds it for microseconds; a process killed while holding it (a background push
under SIGKILL) leaves it forever, and every later push then failed after the remote had
taken its commits. A lock that is still there after a short wait and is older than
``STALE_AFTER`` is a dead writer's: it is removed and the write retried once.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from dulwich.file import FileLocked
from dulwich.objects import ObjectID
from dulwich.refs import Ref
from dulwich.repo import Repo

__all__ = ["STALE_AFTER", "record_remote_head"]

STALE_AFTER = 2.0  # seconds: far beyond the microseconds a live writer holds the lock
_POLL = 0.05


def record_remote_head(repo: Repo, name: str, value: ObjectID) -> None:
    """Set ``refs/remotes/<name>/main`` to ``value``, past a dead writer's lock file."""
    ref = Ref(b"refs/remotes/" + name.encode() + b"/main")
    deadline = time.monotonic() + STALE_AFTER + 1.0
    while True:
        try:
            repo.refs[ref] = value
            return
        except FileLocked as exc:
            lock = Path(os.fsdecode(exc.lockfilename))
            if _age(lock) >= STALE_AFTER or time.monotonic() >= deadline:
                lock.unlink(missing_ok=True)
                repo.refs[ref] = value  # a live writer that raced us: its error is ours
                return
            time.sleep(_POLL)


def _age(path: Path) -> float:
    try:
        return time.time() - path.stat().st_mtime
    except OSError:
        return 0.0
