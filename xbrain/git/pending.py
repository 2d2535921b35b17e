"""The pending-refresh marker: the working-tree paths a write that moved ``main`` has yet
to refresh, written before the ref moves and removed once the files and the git index
match. A crash in between leaves it, and the next write (or ``doctor --repair``)
finishes the refresh; while it exists, git lock files no older than it are the killed
write's own."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

from .objects import PENDING_MARKER

__all__ = ["PendingMarker"]


class PendingMarker:
    """``.git/xbrain/worktree-pending.json``: ``{commit, paths[, indexBusy]}``."""

    def __init__(self, control_dir: Path) -> None:
        self.path = control_dir / PENDING_MARKER

    def add(self, commit: str, paths: list[str]) -> bytes | None:
        """Add ``paths`` (before the ref moves); what the marker held before (None: there
        was none), for ``restore``."""
        self.path.parent.mkdir(exist_ok=True)
        known: set[str] = set(paths)
        try:
            previous: bytes | None = self.path.read_bytes()
        except OSError:  # none, or none that can be read (replaced below)
            previous = None
        with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
            known.update(json.loads(previous or b"")["paths"])
        self._replace(json.dumps({"commit": commit, "paths": sorted(known)}).encode())
        return previous

    def restore(self, previous: bytes | None) -> None:
        """Put the marker back as ``add`` found it, when the ref did not move after all:
        a marker no write needs would make the next one take a git command's fresh
        ``index.lock`` for a killed write's own, and remove it."""
        with contextlib.suppress(OSError):
            if previous is None:
                self.path.unlink(missing_ok=True)
            else:
                self._replace(previous)

    def note_index_busy(self) -> None:
        """Say that a git command held ``index.lock`` when the refresh came to the index,
        so the next write never takes that lock for a killed write's own (the next write
        that moves ``main`` writes the marker afresh)."""
        with contextlib.suppress(OSError, ValueError, TypeError):
            held = json.loads(self.path.read_bytes())
            self._replace(json.dumps({**held, "indexBusy": True}).encode())

    def paths(self) -> list[str]:
        """The paths still to refresh ([]: none; ``["*"]``: a marker that cannot be read,
        so everything)."""
        try:
            paths: list[str] = json.loads(self.path.read_text())["paths"]
        except FileNotFoundError:
            return []
        except (OSError, ValueError, KeyError, TypeError):
            return ["*"]
        return paths

    def written(self) -> float | None:
        """When the marker was last written (None: there is none)."""
        try:
            return self.path.stat().st_mtime
        except FileNotFoundError:
            return None

    def index_busy(self) -> bool:
        """Whether the marker stayed because a git command held the index."""
        try:
            return json.loads(self.path.read_bytes()).get("indexBusy") is True
        except (OSError, ValueError, AttributeError):
            return False

    def clear(self) -> None:
        """The refresh is done."""
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()

    def _replace(self, data: bytes) -> None:
        temp = self.path.with_suffix(".tmp")
        temp.write_bytes(data)
        os.replace(temp, self.path)
