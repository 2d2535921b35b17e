"""Keeping a store's search index current after each commit (a core commit hook).

Kept apart from the search machinery so that registering the hook costs a write nothing:
the index is only opened (and SQLite and the tokenizer imported) when it exists.
"""

from __future__ import annotations

from ..core import CommitId, Core, GitStore

__all__ = ["upkeep"]

INDEX = "xbrain/search.sqlite"  # under .git (query.INDEX_FILE)


def upkeep(core: Core) -> None:
    """Keep ``core``'s search index current after each of its commits (when it has one)."""

    def hook(
        git: GitStore, parent: CommitId | None, commit: CommitId, changes: dict[str, bytes | None]
    ) -> None:
        if not (git.control_dir / INDEX).exists():
            return  # no index yet: the first search builds it
        from ..kinds import resource as resource_kind
        from .operations import after_commit

        if any(path.startswith(resource_kind.DIRECTORY + "/") for path in changes):
            after_commit(core, git, parent, commit, changes)

    core.after_commit.append(hook)
