"""Search through git: catch the index up (or rebuild it), ``--at``, write upkeep.

``search`` brings the index to the commit being searched (or builds one in memory for
``--at``), ranks with BM25F and returns the original's output shape. ``after_commit`` is
the write path's hook that keeps the index in the same state as the commit it just made.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Protocol

from ..codec import load_yaml
from ..core import CommitId, GitStore, View
from ..errors import XbrainError
from ..kinds import resource as resource_kind
from ..kinds.model import normalize_resource
from ..sqlitefiles import rebuilt_if_damaged, remove_database, unsynced_commits
from .freshness import reflects
from .index import SearchIndex
from .query import INDEX_FILE, answer
from .tokenize import Tokenizer

__all__ = ["Progress", "after_commit", "index_path", "reindex", "search"]

Progress = Callable[[int, int], None]  # (records read since the last call, all) while building


class Staged(Protocol):
    """The record a write staged as a file's bytes (``Core.staged_record``)."""

    def __call__(self, path: str, data: bytes, *, parsed: bool = False) -> dict[str, Any] | None:
        """The record, or None (``parsed``: only one staged as reading it gives it)."""


def index_path(git: GitStore) -> Path:
    """Where a store keeps its search index."""
    return git.control_dir / INDEX_FILE


def _records(
    git: GitStore, view: View, progress: Progress | None = None
) -> Iterator[dict[str, Any]]:
    """Every live resource of ``view``'s commit, for a full build (core.bulk)."""
    from ..core import bulk  # its process pool is for builds only, not a write's upkeep

    return bulk.records(git, view, resource_kind.KIND.name, progress)


def _catch_up(
    index: SearchIndex, git: GitStore, view: View, progress: Progress | None = None
) -> None:
    """Make the index reflect ``view``'s commit: incrementally when it can, else rebuild."""
    head = view.snap.commit
    assert head is not None
    with index.write():
        current = index.meta("commit")
        if current == head:
            return
        if current is not None and git.has_commit(current):
            for path in git.changed_files(CommitId(current), head, resource_kind.DIRECTORY):
                rid = Path(path).stem
                resource = resource_kind.get(view, rid)
                if resource is None:
                    index.remove(rid)
                else:
                    index.add(resource)
            index.set_meta("commit", head)
            return
    _rebuild(index, git, view, progress)


def _rebuild(index: SearchIndex, git: GitStore, view: View, progress: Progress | None) -> int:
    """Build the whole index afresh. search.build is imported only here: a write's upkeep
    never needs its helper process, and multiprocessing is a large import for a fresh ``put``."""
    from . import build

    return build.rebuild(index, git, view, progress)


@contextlib.contextmanager
def open_index(
    git: GitStore, view: View, tokenizer: Tokenizer, at: bool, progress: Progress | None = None
) -> Iterator[SearchIndex]:
    """The index for ``view``'s commit: the store's cache, or an in-memory one for ``--at``."""
    if at:
        with SearchIndex(":memory:", tokenizer) as memory:
            memory.rebuild(_records(git, view, progress), str(view.snap.commit))
            yield memory
        return
    path = index_path(git)
    try:
        try:
            index = _current(path, git, view, tokenizer, progress)
        except sqlite3.OperationalError:
            raise
        except sqlite3.DatabaseError:
            # damaged or foreign: it is derived data, so start over from the commits
            remove_database(path)
            index = _current(path, git, view, tokenizer, progress)
    except (sqlite3.OperationalError, OSError):
        # the index cannot be written (a read-only store, a full disk): a search never
        # needs to write, so answer from an index built in memory
        index = SearchIndex(":memory:", tokenizer)
        index.rebuild(_records(git, view, progress), str(view.snap.commit))
    try:
        yield index
    finally:
        index.close()


def _current(
    path: Path, git: GitStore, view: View, tokenizer: Tokenizer, progress: Progress | None
) -> SearchIndex:
    path.parent.mkdir(exist_ok=True)  # a fresh clone has no .git/xbrain yet
    index = SearchIndex(path, tokenizer)
    try:
        _catch_up(index, git, view, progress)
    except BaseException:
        index.close()
        raise
    return index


def search(
    git: GitStore,
    view: View,
    tokenizer: Tokenizer,
    query: str,
    *,
    limit: int = 5,
    domain: str | None = None,
    feature: str | None = None,
    style: str | None = None,
    at: bool = False,
    remote: list[dict[str, Any]] | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Ranked lexical candidates in the original's output shape.

    ``remote`` resources (a provider's search results) join the ranking unless the local
    store has the id, live or deleted: the local copy wins and a local tombstone hides
    the remote one.
    """
    terms = tokenizer.query_terms(query)
    if not terms and not (domain or feature or style):
        return answer([], terms)
    extra = [r for r in remote or [] if view.entry(r["id"]) is None]

    def attempt() -> dict[str, Any]:
        with open_index(git, view, tokenizer, at, progress) as index:
            return answer(index.search(terms, limit, domain, feature, style, extra), terms)

    # --at builds its index in memory from the commits: nothing on disk to start over
    return attempt() if at else rebuilt_if_damaged(index_path(git), attempt)


def reindex(
    git: GitStore, view: View, tokenizer: Tokenizer, progress: Progress | None = None
) -> int:
    """Rebuild the store's index from scratch for ``view``'s commit."""
    path = index_path(git)
    remove_database(path)
    path.parent.mkdir(exist_ok=True)
    with SearchIndex(path, tokenizer) as index:
        return _rebuild(index, git, view, progress)


def after_commit(
    git: GitStore,
    tokenizer: Tokenizer,
    parent: str | None,
    commit: str,
    changes: dict[str, bytes | None],
    staged: Staged | None = None,
    *,
    start: bool = False,
) -> None:
    """Apply a commit's resource changes to an index that reflected its parent.

    An index that is missing or reflects another commit is left alone (the next search
    catches it up). Failures here never fail the write: the commit is already made and
    the index is derived data. ``staged`` gives the record the write staged as a file's
    bytes (``Core.staged_record``): normalized again, it is what parsing the bytes gives
    (a YAML round trip of plain data is the identity), so only bytes that came another
    way are parsed; one staged as ``normalize_resource`` gave it (a put's) is used as it
    is. The rows of every change are written together (``index.update``). ``start``:
    the parent holds no resource, and an index that does not exist yet is made here,
    empty at the parent (one that holds nothing and reflects no commit is taken so).
    """
    path = index_path(git)
    if start:
        path.parent.mkdir(exist_ok=True)
    elif not path.exists():
        return
    with (
        contextlib.suppress(sqlite3.Error, OSError, XbrainError),
        SearchIndex(path, tokenizer) as index,
        unsynced_commits(index.conn),
    ):
        if start and parent is not None and index.meta("commit") is None and not index.count():
            index.set_meta("commit", parent)  # a store's first resources: from nothing
        if parent is not None and reflects(path, index.meta("commit"), parent):
            changed: dict[str, dict[str, Any] | None] = {}
            # (an index started here numbers its documents in path order, as a build does)
            for file, data in sorted(changes.items()) if start else changes.items():
                if not file.startswith(resource_kind.DIRECTORY + "/"):
                    continue
                rid = file.rsplit("/", 1)[-1].removesuffix(".yaml")  # (Path.stem)
                if data is None:
                    changed[rid] = None
                    continue
                record = None if staged is None else staged(file, data, parsed=True)
                if record is not None:
                    changed[rid] = record
                    continue
                record = None if staged is None else staged(file, data)
                changed[rid] = normalize_resource(
                    load_yaml(data) if record is None else record
                ).resource
            index.update(changed)
            index.set_meta("commit", commit)
