"""The markers a killed write leaves, so the next write can finish or undo it.

The pending-refresh marker: the working-tree paths a write that moved ``main`` has yet
to refresh, written before the ref moves and removed once the files and the git index
match. A crash in between leaves it, and the next write (or ``doctor --repair``)
finishes the refresh; while it exists, git lock files no older than it are the killed
write's own.

The objects marker: the loose objects a write is adding, written before the first and
removed after the last. A write killed in between leaves it, and the lock files of those
objects (``objects/<xx>/<rest>.lock``, dulwich's); the next write removes them under the
store lock, where no other write can be adding an object."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

from .objects import OBJECT_NAME, OBJECTS_MARKER, PENDING_MARKER

__all__ = ["ObjectsMarker", "PendingMarker"]


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


class ObjectsMarker:
    """``.git/xbrain/objects-pending``: the ids of the loose objects a write is adding,
    one a line."""

    def __init__(self, control_dir: Path) -> None:
        self.path = control_dir / OBJECTS_MARKER
        self.objects = control_dir / "objects"

    def begin(self, ids: list[bytes]) -> None:
        """Before the first object is written."""
        self.path.parent.mkdir(exist_ok=True)
        self.path.write_bytes(b"".join(sha + b"\n" for sha in ids))

    def end(self) -> None:
        """After the last one (or a failure dulwich cleaned up after)."""
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()

    def locks(self) -> list[Path]:
        """The lock files a killed write left of the objects it was adding."""
        try:
            with self.path.open("rb") as handle:
                lines = handle.read(1 << 16).splitlines()
        except OSError:  # none (or none that can be read: nothing to prove)
            return []
        found = []
        for sha in filter(OBJECT_NAME.fullmatch, lines):
            name = sha.decode()
            lock = self.objects / name[:2] / f"{name[2:]}.lock"
            if lock.is_file() and not lock.is_symlink():
                found.append(lock)
        return found

    def clear(self) -> list[Path]:
        """Remove what a killed write left (call it holding the store lock): its objects'
        lock files, then the marker; the locks removed."""
        found = self.locks()
        for lock in found:
            lock.unlink(missing_ok=True)
        self.end()
        return found
