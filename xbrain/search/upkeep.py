"""Keeping a store's search index current after each commit (a core commit hook).

Kept apart from the search machinery so that registering the hook costs a write nothing:
the index is only opened (and SQLite and the tokenizer imported) when it exists.
"""

from __future__ import annotations

from ..core import CommitId, Core, GitStore

__all__ = ["upkeep"]

INDEX = "xbrain/search.sqlite"  # under .git (query.INDEX_FILE)
SKILL_INDEX = "xbrain/skills.sqlite"  # (skills.SKILL_INDEX)


def upkeep(core: Core) -> None:
    """Keep ``core``'s search index current after each of its commits (when it has one)."""

    def hook(
        git: GitStore, parent: CommitId | None, commit: CommitId, changes: dict[str, bytes | None]
    ) -> None:
        if (git.control_dir / INDEX).exists():
            from .operations import after_commit

            after_commit(core, git, parent, commit, changes)
        if (git.control_dir / SKILL_INDEX).exists():
            from .operations import after_skill_commit

            after_skill_commit(core, git, parent, commit, changes)

    core.after_commit.append(hook)
