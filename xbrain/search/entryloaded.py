"""The entry cache's read side in memory: the candidates a prompt's terms find, and every
entry and posting of a cache held by a long-lived process (``xbrain serve``)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Mapping
from typing import Any

__all__ = ["Candidates", "Frequencies", "Loaded", "links_of"]


class Candidates:
    """The entries sharing a term with a prompt, each with the prompt terms it holds,
    and the document frequencies their scoring needs."""

    def __init__(
        self,
        entries: list[tuple[dict[str, Any], set[str]]],
        df: Mapping[str, int],
        n: int,
        defaults: dict[str, Any],
        links: dict[str, list[tuple[str, str]]] | None = None,
    ) -> None:
        self.entries = entries
        self.df = df
        self.n = n
        self.defaults = defaults  # recall's defaults from xbrain.yaml
        self.links = links or {}  # superseded id → [(active superseding id, its validFrom)]


def links_of(conn: sqlite3.Connection) -> dict[str, list[tuple[str, str]]]:
    """The cache's ``link`` table: superseded id → [(superseding id, its validFrom)]."""
    links: dict[str, list[tuple[str, str]]] = {}
    for old, new, since in conn.execute("SELECT old, new, since FROM link"):
        links.setdefault(old, []).append((new, since))
    return links


class Loaded:
    """Every entry and posting of the cache at one commit, held by a long-lived process."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.entries = {
            i: json.loads(data) for i, data in conn.execute("SELECT i, data FROM entry")
        }
        self.postings: dict[str, set[int]] = {}
        for term, i in conn.execute("SELECT term, i FROM posting"):
            self.postings.setdefault(term, set()).add(i)
        row = conn.execute("SELECT value FROM meta WHERE key = 'recall'").fetchone()
        defaults = json.loads(row[0] if row else "{}")
        self.defaults = defaults if isinstance(defaults, dict) else {}
        self.links = links_of(conn)

    def candidates(self, terms: set[str]) -> Candidates:
        """The entries holding any of ``terms``, with those terms, and their df."""
        held: dict[int, set[str]] = {}
        for term in terms:
            for i in self.postings.get(term, ()):
                held.setdefault(i, set()).add(term)
        entries = [(self.entries[i], found) for i, found in sorted(held.items())]
        df = Frequencies(self.postings)  # counted when scoring asks (it asks for few)
        return Candidates(entries, df, len(self.entries), self.defaults, self.links)


class Frequencies(Mapping[str, int]):
    """Each term's entry count, read off the postings held in memory when asked."""

    def __init__(self, postings: dict[str, set[int]]) -> None:
        self.postings = postings

    def __getitem__(self, term: str) -> int:
        return len(self.postings[term])

    def __iter__(self) -> Iterator[str]:
        return iter(self.postings)

    def __len__(self) -> int:
        return len(self.postings)
