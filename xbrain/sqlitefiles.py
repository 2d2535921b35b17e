"""The SQLite files under ``.git/xbrain`` (a leaf: no imports, cheap on every prompt):
derived data (search and skill indexes, the entry cache, the history table) and the
local telemetry. Each is one database file with WAL siblings; what removes one removes
all three."""

from __future__ import annotations

from pathlib import Path

__all__ = ["remove_database"]


def remove_database(path: Path) -> None:
    """Delete the database at ``path`` with its ``-wal`` and ``-shm`` files."""
    for suffix in ("", "-wal", "-shm"):
        path.with_name(path.name + suffix).unlink(missing_ok=True)
