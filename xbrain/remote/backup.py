"""``backup create FILE``: the whole store in one file, a git bundle of ``main``.

The bundle holds every kind of record (resources, skills and their revisions, entries,
tombstones), the state files and the whole history: what ``export-store``'s original
format cannot. ``clone FILE DIR`` restores it through the same checks as any clone (the
bundle is input from outside: its size is bounded, its pack checked before it is
indexed, its tree by the hostile-tree gate), and ``git clone FILE`` reads it too.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..core import NO_LIMIT, Core, PackBound
from ..core.registry import largest_file

__all__ = ["MAX_BUNDLE", "bundle_bound", "bundle_file", "create"]

MAX_BUNDLE = 2 << 30  # bytes: far above a store's 20 MiB of records and a long history


def create(core: Core, file: Path, *, force: bool = False) -> dict[str, Any]:
    """Write the store's ``main`` as a git bundle at ``file`` (0600; outside the store; an
    existing file only with ``force``)."""
    target = core.export_target(Path(file), force)
    core.existing()
    with core.git() as git:
        commit, size = git.bundles().write_bundle(target)
    return {"backup": str(target), "bytes": size, "commit": commit}


def bundle_file(location: str) -> Path | None:
    """The file ``location`` names when it is a path to an existing file (a bundle to
    restore from, or something that is not one), else None (a URL, a directory)."""
    if "://" in location or not os.path.isfile(location):
        return None
    return Path(os.path.abspath(location))


def bundle_bound() -> PackBound:
    """What a bundle may hold: at most :data:`MAX_BUNDLE` bytes, and no object larger
    than the largest kind of file a store has (as a remote's pack)."""
    return PackBound(MAX_BUNDLE, NO_LIMIT, largest_file(), NO_LIMIT)
