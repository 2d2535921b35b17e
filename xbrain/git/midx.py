"""A multi-pack-index git wrote beside the store's packs (``git multi-pack-index
write``, ``git maintenance``): one index of several packs, naming each.

xbrain never writes one, and git works without it. A pack it names that is gone breaks
git (``git fsck``: "failed to load pack"), so whatever removes packs first removes a
multi-pack-index naming any of them, with its bitmap and reverse index: before the
packs, so that a kill in between leaves git working. ``doctor`` reports one naming a
pack that is missing, and ``--repair`` removes it.
"""

from __future__ import annotations

import contextlib
import os
import struct
from collections.abc import Iterable
from pathlib import Path

from dulwich.midx import load_midx

__all__ = ["MIDX", "drop_midx", "midx_packs", "stale_midx"]

MIDX = "multi-pack-index"


def midx_packs(pack_dir: Path) -> set[str] | None:
    """The basenames (``pack-…``) of the packs the multi-pack-index in ``pack_dir``
    names; an empty set when there is none, None when it cannot be read (damaged, or
    not a file)."""
    path = pack_dir / MIDX
    if not os.path.lexists(path):
        return set()
    if path.is_symlink() or not path.is_file():
        return None
    try:
        index = load_midx(path)
    except FileNotFoundError:
        return set()
    except (OSError, ValueError, AssertionError, IndexError, struct.error):
        return None
    try:
        return {name.rsplit(".", 1)[0] for name in index.pack_names}
    finally:
        index.close()


def drop_midx(pack_dir: Path, removing: Iterable[str] | None = None) -> bool:
    """Remove the multi-pack-index in ``pack_dir`` when it names any of the packs
    ``removing`` (basenames; None: whatever it names) or cannot be read, then its
    bitmap and reverse index. Whether one was removed."""
    names = midx_packs(pack_dir)
    if names == set():
        return False
    if names is not None and removing is not None and not names & set(removing):
        return False
    try:
        os.unlink(pack_dir / MIDX)
    except (FileNotFoundError, IsADirectoryError):
        return False  # gone meanwhile, or a folder of that name: nothing git reads
    for name in os.listdir(pack_dir):
        if name.startswith(f"{MIDX}-") and name.endswith((".bitmap", ".rev")):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(pack_dir / name)
    return True


def stale_midx(pack_dir: Path) -> str | None:
    """What is wrong with the multi-pack-index in ``pack_dir`` (a pack it names is
    missing, or it cannot be read), or None (none there, or sound)."""
    names = midx_packs(pack_dir)
    if names is None:
        return "it cannot be read"
    missing = sorted(
        name
        for name in names
        if not (pack_dir / f"{name}.pack").is_file() or not (pack_dir / f"{name}.idx").is_file()
    )
    if missing:
        shown = ", ".join(missing[:3])
        return f"it names {len(missing)} pack(s) that are gone ({shown}): git fsck fails"
    return None
