"""``xbrain gc``: every pack and loose object of the store consolidated into one pack.

After each write the core merges packs geometrically (``GitStore.keep_packs``, a large
merge in a detached process); this full consolidation also packs every loose object
and drops the loose copies of packed ones. It runs under the store lock, waits for a
detached merge to finish, never drops an object (reachable or not), and removes a
replaced pack or loose copy only once the new pack has landed.
"""

from __future__ import annotations

from typing import Any

from ..core import Core, GitStore, private_umask

__all__ = ["gc", "object_counts"]


def object_counts(git: GitStore) -> dict[str, int]:
    """Packs (every one; ``keptPacks`` of them marked ``.keep``, which gc leaves as they
    are) and loose objects: how many, and their bytes (what doctor reports)."""
    stats = git.pack_stats()
    return {
        "packs": stats.packs,
        "keptPacks": stats.kept_packs,
        "packBytes": stats.pack_bytes,
        "loose": stats.loose,
        "looseBytes": stats.loose_bytes,
    }


def gc(core: Core) -> dict[str, Any]:
    """Consolidate the store at ``core`` into one pack; the counts before and after."""
    core.existing()
    with core.locked(), core.git() as git, private_umask():
        before = object_counts(git)
        git.consolidate()
        return {"ok": True, "store": str(git.path), "before": before, "after": object_counts(git)}
