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


def read_layer(store: str | Path, head: str | None) -> dict[str, Any] | None:
    """``{hidden: [ids], provenance: {key: [committer, epoch, commit]}}`` when it was
    worked out at ``head``; else None."""
    try:
        fd = os.open(layer_file(store), os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as handle:
            data = handle.read(_MAX + 1)
        value = json.loads(data) if len(data) <= _MAX else None
    except (OSError, ValueError):
        return None
    if not isinstance(value, dict) or value.get("commit") != head or head is None:
        return None
    return value
