"""The facade's resource facts and review (a mixin of ``Store``): supersede, the
resources' half of the review queue, and the search a write's ``possibleConflicts``
come from (the facade hands search to the feature)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..core import Core

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

        return put(self.core, items, facts, propose=propose, similar=self._similar)

    def _similar(self, text: str) -> list[dict[str, Any]]:
        """The resources in force that a search for ``text`` finds first."""
        from ..errors import XbrainError
        from ..retrieval.run import search_store

        query = " ".join(text.split())[:2000]
        if not query:
            return []
        try:
            found = search_store(self.path, self.cache_dir, query, limit=5, mode="lexical")
        except XbrainError:  # a store that cannot be searched: no candidates, the write stands
            return []
        return [result["resource"] for result in found["results"]]

    def _proposed_resources(self) -> list[dict[str, Any]]:
        from ..resourcereview import pending

        return pending(self.core, self._similar)
