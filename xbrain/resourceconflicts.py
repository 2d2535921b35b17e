"""``possibleConflicts``: the resources in force a resource just written may be about
the same subject as (the same title, or most words of title and purpose shared), from
the candidates a ``Similar`` finds (the facade hands one in: the search index's
postings, else a search). Reported, never changed; every result lists them (none:
``[]``). A batch checks its first ``MAX_CONFLICT_CHECKS`` resources; an ``Ahead`` (the
index's finder) may count their candidates while the batch is written."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Any, Protocol

from .text import SIMILAR, likeliest_conflicts, shared_words, word_set

__all__ = ["MAX_CONFLICT_CHECKS", "Ahead", "Similar", "asks", "conflicts"]

MAX_CONFLICT_CHECKS = 50  # a batch's first resources are checked (README: the others list [])
# title, purpose, ids to pass over → resources in force
Similar = Callable[[str, str, set[str]], list[dict[str, Any]]]
Asks = list[tuple[str, str, Collection[str]]]


class Ahead(Protocol):
    """What may work on a batch while it is written: count its candidates (and cut its
    text for the search index)."""

    def ahead(self, asks: Asks, batch: Collection[str], written: Sequence[dict[str, Any]]) -> None:
        """Before the write: the calls ``conflicts`` will make, the ids written, the
        resources written (valid, normalized)."""

    def landed(self, parent: str | None, commit: str | None) -> None:
        """After it: the commit made (None: none), on top of ``parent``."""


def _passed(batch: set[str], replaces: dict[str, list[str]] | None, rid: str) -> set[str]:
    """What a call for ``rid`` passes over: the resources written with it (on purpose,
    not "existing") and those it supersedes."""
    return batch | set((replaces or {}).get(rid, ()))


def asks(
    written: list[dict[str, Any]], batch: set[str], replaces: dict[str, list[str]] | None
) -> Asks:
    """The calls ``conflicts`` makes for ``written`` (each one that changes): title,
    purpose, ids passed over."""
    return [
        (new["title"], new.get("purpose", ""), _passed(batch, replaces, new["id"]))
        for new in written
    ]


def _words(resource: dict[str, Any]) -> set[str]:
    return word_set(f"{resource['title']} {resource.get('purpose', '')}")


def conflicts(
    written: list[dict[str, Any]],
    similar: Similar,
    results: list[dict[str, Any]],
    replaces: dict[str, list[str]] | None = None,
) -> None:
    """Add ``possibleConflicts`` ([{id, name, why}]) to the results of ``written``
    resources (those the write changed): resources in force, other than the ones
    written with them, that ``similar`` finds for the title and purpose and that share
    the title, or most of the words of title and purpose (``replaces``: what each
    supersedes, never called a conflict)."""
    by_id = {result["id"]: result for result in results}
    # written together on purpose (the whole put, not only the resources checked)
    batch = set(by_id) | {new["id"] for new in written}
    for new in written:
        result = by_id.get(new["id"])
        if result is None or result.get("status") == "unchanged":
            continue
        words, title = _words(new), _same_title(new["title"])
        found: list[tuple[float, dict[str, Any]]] = []
        passed = _passed(batch, replaces, new["id"])
        for other in similar(new["title"], new.get("purpose", ""), passed):
            if other["id"] in passed:
                continue
            theirs = _words(other)
            share = shared_words(words, theirs)
            if _same_title(other["title"]) == title:
                found.append(
                    (2.0, {"id": other["id"], "name": other["title"], "why": "same title"})
                )
            elif share >= SIMILAR:
                why = f"similar title and purpose ({share:.2f} of words shared)"
                found.append((share, {"id": other["id"], "name": other["title"], "why": why}))
        # the ten likeliest: the same title first, then the most words shared, then by id
        result["possibleConflicts"] = likeliest_conflicts(found)


def _same_title(title: str) -> str:
    """A title as two that are "the same title" share it: case and runs of white space
    aside."""
    return " ".join(title.split()).casefold()
