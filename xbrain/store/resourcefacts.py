"""The facade's resource facts and review (a mixin of ``Store``): supersede, the
resources' half of the review queue, and the search a write's ``possibleConflicts``
come from (the facade hands search to the feature)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..core import Core
    from ..search.similar import SimilarFinder

__all__ = ["ResourceFacts"]


class ResourceFacts:
    """``Store``'s resource facts (issue 46)."""

    core: Core
    path: Path
    cache_dir: Path

    def resource_supersede(self, old: str, new: str) -> dict[str, Any]:
        """Record that resource ``new`` supersedes resource ``old``."""
        from ..resourcereview import supersede

        return supersede(self.core, old, new)

    def supersede(self, old: str, new: str) -> dict[str, Any]:
        """``new`` supersedes ``old``: two resources, or two entries."""
        from ..errors import InvalidInputError

        kinds = {rid.split("_", 1)[0] for rid in (old, new)}
        if kinds == {"entry"}:
            from ..entries.review import supersede

            return supersede(self.core, old, new)
        if kinds != {"resource"}:
            raise InvalidInputError("Give two resource ids or two entry ids.")
        return self.resource_supersede(old, new)

    def put_facts(
        self, items: Any, facts: dict[str, Any] | None, propose: dict[str, str] | None
    ) -> dict[str, Any]:
        """Resources put with their facts (supersedes, validity) and, for a proposal,
        who proposes them; each result names the resources it may conflict with."""
        from ..resourcereview import put

        with self._similar_finder() as (similar, finder):
            return put(self.core, items, facts, propose=propose, similar=similar, ahead=finder)

    @contextlib.contextmanager
    def _similar_finder(
        self,
    ) -> Iterator[tuple[Callable[[str, str, set[str]], list[dict[str, Any]]], SimilarFinder]]:
        """What finds the candidates of possibleConflicts: the index's title and purpose
        postings, one read for a whole batch (opened at the first call, after the
        commit; a batch's may be counted ahead); a search when the index cannot answer.
        With it, the finder itself (for ``ahead``)."""
        from ..search.similar import SimilarFinder
        from ..text import SIMILAR

        with SimilarFinder(self.path, self.cache_dir, SIMILAR) as finder:

            def similar(title: str, purpose: str, passed: set[str]) -> list[dict[str, Any]]:
                found = finder.find(title, purpose, passed)
                return self._similar(title, purpose) if found is None else found

            yield similar, finder

    def _similar(self, title: str, purpose: str) -> list[dict[str, Any]]:
        """The resources in force that a search for the title and purpose finds first
        (when the index cannot answer from its title and purpose postings)."""
        from ..errors import XbrainError
        from ..retrieval.run import search_store

        query = " ".join(f"{title} {purpose}".split())[:2000]
        if not query:
            return []
        try:
            found = search_store(self.path, self.cache_dir, query, limit=5, mode="lexical")
        except XbrainError:  # a store that cannot be searched: no candidates, the write stands
            return []
        return [result["resource"] for result in found["results"]]

    def _proposed_resources(self) -> list[dict[str, Any]]:
        from ..resourcereview import pending

        with self._similar_finder() as (similar, _):
            return pending(self.core, similar)
