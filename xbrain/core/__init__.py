"""The kind-agnostic store core: lock, views, transactions, commits, registry, settings.

Features build on this package's public names only; it imports no feature and no kind.
The repository types features need come from here too, so only the core opens git.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..git import (
    FILE_MODE,
    MAX_WORKTREE_FILE,
    NO_LIMIT,
    WORKTREE_TEMP,
    CommitId,
    CommitInfo,
    ForeignTree,
    GitStore,
    Limits,
    PackBound,
    Snapshot,
    UnreadableIndex,
    file_mode_problems,
    fix_file_modes,
    keep_repositories,
    keep_trees,
    local_path,
    private_umask,
    read_foreign_tree,
    read_worktree_file,
    regular_file,
    release_repositories,
    sweep_dead,
)
from . import layout
from .base import AfterCommit, Core, new_store_path, refuse_hand_edits
from .config import DEFAULT_IDENTITY, LimitError, StoreConfig
from .registry import limited_count
from .view import Transaction, View

if TYPE_CHECKING:
    from ..git import Rewrite, TreeReader


def __getattr__(name: str) -> Any:
    """``Rewrite`` and ``TreeReader`` (purge's types), from the git layer on first use."""
    if name in ("Rewrite", "TreeReader"):
        from .. import git

        return getattr(git, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "DEFAULT_IDENTITY",
    "FILE_MODE",
    "MAX_WORKTREE_FILE",
    "NO_LIMIT",
    "WORKTREE_TEMP",
    "AfterCommit",
    "CommitId",
    "CommitInfo",
    "Core",
    "ForeignTree",
    "GitStore",
    "LimitError",
    "Limits",
    "PackBound",
    "Rewrite",
    "Snapshot",
    "StoreConfig",
    "Transaction",
    "TreeReader",
    "UnreadableIndex",
    "View",
    "file_mode_problems",
    "fix_file_modes",
    "keep_repositories",
    "keep_trees",
    "layout",
    "limited_count",
    "local_path",
    "new_store_path",
    "private_umask",
    "read_foreign_tree",
    "read_worktree_file",
    "refuse_hand_edits",
    "regular_file",
    "release_repositories",
    "sweep_dead",
]
