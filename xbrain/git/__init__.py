"""The only package that imports dulwich: commits, reads, refs, remotes and the working tree.

Invariants:

* The committed tree at ``refs/heads/main`` is the truth. A write builds blobs and trees
  straight into the object store, then moves ``main`` by compare-and-swap from the commit
  it started from. A crash before the ref moves leaves only unreachable objects.
* After the ref moves, the touched working-tree files and their git-index entries are
  refreshed. A marker file under ``.git/xbrain/`` names those paths until that is done,
  so the next write (or ``doctor --repair``) finishes the job after a crash.
* Everything created under the store is private: writes run with umask 077.
* dulwich types and exceptions never leave this package; paths are ``str`` outside and
  UTF-8 ``bytes`` inside.

``GitStore`` is assembled from four parts, one module each: ``repo`` (reading, refs,
settings), ``writing`` (commits, CAS), ``worktree`` (working tree, git index) and
``transport`` (remotes), plus ``bundle`` (``main`` as one file, and back) and ``packs``
(consolidating packs and loose objects after each write, and ``xbrain gc``). ``index``
edits the git index file in place.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from .foreign import ForeignTree, Limits, PackBound, read_foreign_tree
from .objects import FILE_MODE, CommitId, CommitInfo, Leaf, Snapshot, keep_trees, private_umask
from .packcheck import NO_LIMIT
from .packs import Packs, PackStats
from .repo import keep_repositories, release_repositories
from .transport import Transport, local_path, sweep_dead
from .worktree import UnreadableIndex, Worktree
from .writing import Writer
from .wtfiles import (
    MAX_WORKTREE_FILE,
    WORKTREE_TEMP,
    file_mode_problems,
    fix_file_modes,
    read_worktree_file,
    regular_file,
)

__all__ = [
    "FILE_MODE",
    "MAX_WORKTREE_FILE",
    "NO_LIMIT",
    "WORKTREE_TEMP",
    "CommitId",
    "CommitInfo",
    "ForeignTree",
    "GitStore",
    "Leaf",
    "Limits",
    "PackBound",
    "PackStats",
    "Rewrite",
    "Snapshot",
    "TreeReader",
    "UnreadableIndex",
    "file_mode_problems",
    "fix_file_modes",
    "keep_repositories",
    "keep_trees",
    "local_path",
    "private_umask",
    "read_foreign_tree",
    "read_worktree_file",
    "regular_file",
    "release_repositories",
    "sweep_dead",
]


if TYPE_CHECKING:  # loaded when used: a write or a read pays for neither
    from .bundle import Bundles
    from .rewrite import Rewrite, Rewriter, TreeReader

_V = TypeVar("_V")


def __getattr__(name: str) -> Any:
    """``Rewrite`` and ``TreeReader`` (purge's types), imported on first use."""
    if name in ("Rewrite", "TreeReader"):
        from . import rewrite

        return getattr(rewrite, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _view(cls: type[_V], store: GitStore) -> _V:
    """``store`` seen as ``cls``: the same repository and state, more operations."""
    view = cls.__new__(cls)
    view.__dict__ = store.__dict__
    return view


class GitStore(Writer, Worktree, Transport, Packs):
    """A store's git repository: read, commit, refresh the working tree, talk to remotes.
    Purge's history rewriting (:meth:`history`) and bundles (:meth:`bundles`) load only
    when asked for, so a fresh write or read does not import them."""

    def history(self) -> Rewriter:
        """This repository with the history rewrite, prune and purge-lease operations."""
        from .rewrite import Rewriter

        return _view(Rewriter, self)

    def bundles(self) -> Bundles:
        """This repository with the bundle operations (``backup create``, ``clone FILE``)."""
        from .bundle import Bundles

        return _view(Bundles, self)

    def index_bases(self) -> dict[str, int]:
        """The shared index files the git index does not name (a split index's old bases,
        removed by the next write once xbrain wrote them or git's expired): how many, and
        their bytes (what doctor reports)."""
        from .indexbases import unnamed

        sizes = []
        for path in unnamed(self.control_dir):
            with contextlib.suppress(OSError):
                sizes.append(path.lstat().st_size)
        return {"unnamed": len(sizes), "unnamedBytes": sum(sizes)}

    @staticmethod
    def create(
        path: Path, files: Mapping[str, bytes], message: str, identity: str, when: int
    ) -> bool:
        """Create a store with one root commit; False if another process got there first.

        The repository is built in a sibling temp directory and renamed into place, so a
        half-initialized store is never visible and a crash leaves only the temp dir.
        """
        with private_umask():  # new parent directories are 0700 too (mkdir -p ignores mode)
            path.parent.mkdir(parents=True, exist_ok=True)
            temp = Path(tempfile.mkdtemp(prefix=f".{path.name}.init-", dir=path.parent))
            try:
                GitStore.init_private(temp)
                store = GitStore(temp)
                try:
                    commit = store.commit(None, dict(files), message, identity, when)
                    store.refresh_worktree(commit, list(files))
                finally:
                    store.close()
                try:
                    os.rename(temp, path)
                except OSError:
                    if path.is_dir() and any(path.iterdir()):
                        return False
                    raise
                return True
            finally:
                shutil.rmtree(temp, ignore_errors=True)
