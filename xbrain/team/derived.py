"""The derived files a read of a team layer uses, read without git (a prompt's path):
``.git/xbrain/team-layer.json`` — for the commit it was worked out at, the ids the layer
hides and each record's provenance. Worked out by :mod:`xbrain.team.hidden` after every
team command that moves the layer (add, pull, share, review, sync), and by the first
read that finds it behind (a ``remote pull`` run in the team store by hand).
"""

from __future__ import annotations

import json
import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

__all__ = ["FILE", "layer_file", "read_layer"]

FILE = "team-layer.json"
_MAX = 64 << 20


def layer_file(store: str | Path) -> str:
    """Where a team layer's derived file lives."""
    return os.path.join(os.fspath(store), ".git", "xbrain", FILE)


_kept: dict[str, tuple[tuple[int, int, int], Any]] = {}  # path → (its stat, its value)


def read_layer(store: str | Path, head: str | None) -> dict[str, Any] | None:
    """``{hidden: [ids], provenance: {key: [committer, epoch, commit]}}`` when it was
    worked out at ``head``; else None. A process that reads it again (``xbrain serve``,
    the MCP server) parses it again only when the file was replaced (it always is, never
    written in place): with every record's provenance it is megabytes on a big team."""
    path = layer_file(store)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as handle:
            seen = os.fstat(handle.fileno())
            stamp = (seen.st_ino, seen.st_mtime_ns, seen.st_size)
            kept = _kept.get(path)
            if kept is not None and kept[0] == stamp:
                value = kept[1]
            else:
                data = handle.read(_MAX + 1)
                value = json.loads(data) if len(data) <= _MAX else None
                _kept[path] = (stamp, value)
    except (OSError, ValueError):
        return None
    if not isinstance(value, dict) or value.get("commit") != head or head is None:
        return None
    return value
