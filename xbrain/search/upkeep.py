"""Keeping a store's search index current after each commit (a core commit hook).

Kept apart from the search machinery so that registering the hook costs a write nothing:
the index is only opened (and SQLite and the tokenizer imported) when it exists.
"""

from __future__ import annotations

import contextlib
from typing import Any

from ..core import CommitId, Core, GitStore, View, private_umask

__all__ = ["upkeep"]

INDEX = "xbrain/search.sqlite"  # under .git (query.INDEX_FILE)
SKILL_INDEX = "xbrain/skills.sqlite"  # (skills.SKILL_INDEX)
ENTRIES = "xbrain/entries.sqlite"  # (entrycache.CACHE_FILE)
RESOURCES = "resources/"  # what the search index is derived from (kinds.resource.DIRECTORY)
SKILLS = "skills/"  # what the skill index is derived from (kinds.skill.DIRECTORY)
ENTRY_PATHS = ("entries/", "entry-tombstones/")  # and the entry cache (kinds.entry), with
MARKER = "xbrain.yaml"  # recall's defaults (core.layout.MARKER)


def upkeep(core: Core) -> None:
    """Keep ``core``'s search indexes current after each of its commits (when they exist).

    Failures never fail the write: the commit is made, and an index is derived data that
    the next search or recall catches up. Each index (resources, skills, entries) is
    written only by a commit that changed what it derives from; after any other commit a
    note says it still holds (:mod:`.freshness`, the rule every reader follows).
    """

    def hook(
        git: GitStore, parent: CommitId | None, commit: CommitId, changes: dict[str, bytes | None]
    ) -> None:
        control = git.control_dir
        resources = (control / INDEX).exists()
        start = not resources and core.committing() == "put"  # (checks conflicts next)
        start = start and _first_resources(git, parent, changes)
        resources = resources or start
        skills = (control / SKILL_INDEX).exists()
        entries = (control / ENTRIES).exists()
        if not (resources or skills or entries):
            return
        import sqlite3

        from ..errors import XbrainError
        from .freshness import carry

        failures = (sqlite3.Error, OSError, XbrainError)
        resources_touched = resources and any(path.startswith(RESOURCES) for path in changes)
        skills_touched = skills and any(path.startswith(SKILLS) for path in changes)
        entries_touched = entries and any(
            path.startswith(ENTRY_PATHS) or path == MARKER for path in changes
        )
        # an index whose kind the commit left alone is not written: a note says it holds
        with contextlib.suppress(*failures), private_umask():
            if resources and not resources_touched:  # a skill save, an entry put
                carry(control / INDEX, parent, commit)
            if skills and not skills_touched:
                carry(control / SKILL_INDEX, parent, commit)
            if entries and not entries_touched:
                carry(control / ENTRIES, parent, commit)
        if not (resources_touched or skills_touched or entries_touched):
            return
        from .tokenize import Tokenizer

        tokenizer = Tokenizer(core.cache_dir)
        try:
            if resources_touched:
                from .service import after_commit

                with contextlib.suppress(*failures), private_umask():
                    staged = core.staged_record
                    after_commit(git, tokenizer, parent, commit, changes, staged, start=start)
            if skills_touched:
                from .skills import after_commit as skills_after_commit

                with contextlib.suppress(*failures), private_umask():
                    view = View(git.snapshot(commit))
                    skills_after_commit(control, tokenizer, view, parent)
            if entries_touched:
                with contextlib.suppress(*failures), private_umask():
                    _entries_after_commit(git, tokenizer, parent, commit, changes)
        finally:
            tokenizer.close()

    core.after_commit.append(hook)


def _first_resources(
    git: GitStore, parent: CommitId | None, changes: dict[str, bytes | None]
) -> bool:
    """Whether ``changes`` (a ``put``'s: at most 1,000 resources, whose rows an update
    holds at once as for any batch) bring a store's first resources (its parent holds
    none): then this commit starts the search index, made here empty at the parent,
    with its rows from the records the write staged (the put's conflict check reads it
    next; else a search would build it, parsing them all again). An import builds it
    itself, with its progress bar."""
    if parent is None or not any(path.startswith(RESOURCES) for path in changes):
        return False
    return git.snapshot(parent).entry(RESOURCES.rstrip("/")) is None


def _entries_after_commit(
    git: GitStore,
    tokenizer: Any,
    parent: CommitId | None,
    commit: CommitId,
    changes: dict[str, bytes | None],
) -> None:
    """Bring recall's entry cache along: the entries this commit changed, parsed again."""
    from pathlib import PurePosixPath

    from ..core.registry import record_kind
    from ..kinds import entry as entry_kind
    from .entrycache import update

    changed: dict[str, dict[str, Any] | None] = {}
    for path, data in changes.items():
        if path.startswith((entry_kind.DIRECTORY + "/", entry_kind.TOMBSTONE_DIRECTORY + "/")):
            rid = PurePosixPath(path).stem
            live = path.startswith(entry_kind.DIRECTORY + "/") and data is not None
            if live:
                assert data is not None
                changed[rid] = record_kind("entry").parse(data)
            else:
                changed.setdefault(rid, None)
    defaults = None
    marker = changes.get("xbrain.yaml")
    if marker is not None:  # recall's defaults changed with the settings
        from ..core import StoreConfig

        defaults = StoreConfig.from_marker(marker).recall_settings()
    update(git.control_dir, parent, commit, changed, tokenizer, defaults)
