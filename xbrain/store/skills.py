"""The facade's skill methods (a mixin of ``Store``): one call into the feature each."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

if TYPE_CHECKING:
    from ..core import Core

__all__ = ["Skills"]


class Skills:
    """``Store``'s skill operations (SPEC §12)."""

    core: Core
    path: Path
    cache_dir: Path

    def skill_save(
        self, source: Path | BinaryIO, *, publish: bool = False, expect: str | None = None
    ) -> dict[str, Any]:
        """Append a revision of a skill (a directory, ``SKILL.md`` or ZIP; a stream)."""
        from .. import skills

        return skills.save_input(self.core, source, publish=publish, expect=expect)

    def skill_save_files(
        self, files: dict[str, bytes], *, publish: bool = False, expect: str | None = None
    ) -> dict[str, Any]:
        """Append a revision from files given as path → bytes (an MCP ``save_skill``):
        proposed, or published when ``publish``."""
        from .. import skills

        state = "published" if publish else "proposed"
        return skills.save(self.core, files, source={"type": "save"}, state=state, expect=expect)

    def skill_import(
        self, source: Path | BinaryIO | str, *, ref: str | None = None, path: str | None = None
    ) -> dict[str, Any]:
        """Import a skill from a directory, ``SKILL.md``, ZIP or git URL (as proposed)."""
        from .. import skills

        if isinstance(source, str):
            return skills.import_git(self.core, source, ref=ref, path=path)
        return skills.import_skill(self.core, source)

    def skill_list(self) -> dict[str, Any]:
        """Every skill with its status and published revision."""
        from ..skills.reading import list_skills

        return list_skills(self.core)

    def skill_recall(self, query: str, limit: int = 5) -> dict[str, Any]:
        """Level 0: ranked descriptors of the active skills matching ``query``."""
        from ..retrieval.skillrecall import recall

        return recall(self.path, self.cache_dir, query, limit)

    def skill_show(
        self, slug: str, revision: str | None = None, *, proposed: bool = False
    ) -> dict[str, Any]:
        """Level 1: instructions and component manifest (published, else the latest not
        proposed; ``proposed``: a reviewer's read, which may show a proposed head)."""
        from ..skills.reading import read_level1

        return read_level1(self.core, slug, revision, proposed=proposed)

    def skill_component(self, slug: str, revision: str | None, path: str) -> dict[str, Any]:
        """Level 2: one component of exactly ``revision``."""
        from ..skills.reading import read_component

        return read_component(self.core, slug, revision, path)

    def skill_log(self, slug: str, limit: int = 20) -> dict[str, Any]:
        """A skill's revisions, newest first, and the commits that changed it."""
        from ..skills.reading import log

        return log(self.core, slug, limit)

    def skill_diff(self, slug: str, old: str, new: str, form: str = "hunks") -> dict[str, Any]:
        """Word-level diff of two revisions (Chinese cut like jieba); ``form``: ``hunks``,
        ``ops`` or ``unified`` (:func:`xbrain.skills.reading.diff`)."""
        from ..search.tokenize import Tokenizer
        from ..skills.reading import diff

        tokenizer = Tokenizer(self.cache_dir)
        try:
            return diff(self.core, slug, old, new, tokenizer.segmenter.cut, form)
        finally:
            tokenizer.close()

    def word_diff(self, old: str, new: str) -> list[dict[str, Any]]:
        """The word-level ops from ``old`` to ``new`` as ``skill diff --format ops`` gives
        them (Chinese cut like jieba, words kept whole): what ``xbrain ui`` shows of two
        revisions of a resource's or an entry's text fields."""
        from ..kinds.skilldiff import diff
        from ..search.tokenize import Tokenizer

        tokenizer = Tokenizer(self.cache_dir)
        try:
            return diff(old, new, tokenizer.segmenter.cut)
        finally:
            tokenizer.close()

    def skill_lifecycle(self, verb: str, slug: str, revision: str | None = None) -> dict[str, Any]:
        """``publish``/``deprecate`` a revision, ``archive``/``unarchive`` a skill."""
        from .. import skills

        if verb in ("archive", "unarchive"):
            return skills.archive(self.core, slug, verb == "archive")
        assert revision is not None
        change = skills.publish if verb == "publish" else skills.deprecate
        return change(self.core, slug, revision)

    def skill_restore(self, slug: str, revision: str, *, publish: bool = False) -> dict[str, Any]:
        """Revision ``revision``'s files as a new head revision (a rollback)."""
        from .. import skills

        return skills.restore(self.core, slug, revision, publish=publish)

    def skill_export(
        self, slug: str, out: Path, revision: str | None = None, *, force: bool = False
    ) -> dict[str, Any]:
        """Write one revision as a deterministic ZIP capsule (over an existing file only
        when ``force``)."""
        from ..skills.capsule import export

        return export(self.core, slug, revision, out, force)
