"""What this device remembers of a team store's syncs: ``.git/xbrain/sync-state.json``
(never committed): the last successful sync, the last attempt and its error."""

from __future__ import annotations

import contextlib
import json
import os
from typing import Any

__all__ = ["note_sync", "read_sync"]

_FILE = os.path.join(".git", "xbrain", "sync-state.json")
_MAX = 64 << 10


def read_sync(store: str | os.PathLike[str]) -> dict[str, Any]:
    """The remembered state (empty when none, or unreadable)."""
    path = os.path.join(os.fspath(store), _FILE)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as handle:
            data = handle.read(_MAX + 1)
        value = json.loads(data) if len(data) <= _MAX else {}
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def note_sync(store: str | os.PathLike[str], **changes: Any) -> dict[str, Any]:
    """Merge ``changes`` into the remembered state (written 0600, replaced atomically);
    a device that cannot write it loses only this note."""
    state = {**read_sync(store), **changes}
    path = os.path.join(os.fspath(store), _FILE)
    temp = f"{path}.{os.getpid()}.tmp"
    with contextlib.suppress(OSError):
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(state, handle, sort_keys=True)
        os.replace(temp, path)
    with contextlib.suppress(OSError):
        os.unlink(temp)
    return state
