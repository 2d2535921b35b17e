"""The resources a new one may conflict with, read from the title and purpose postings.

A write's ``possibleConflicts`` are the resources in force with the same title, or most
of the same title and purpose words (``resourcereview.conflicts`` decides). Ranking the
whole store for the title and purpose (a search) scores every document that holds any
of their words: in a store whose titles share their words, that is every document, for
each resource written. Here only documents that hold enough of the terms in their title
or purpose are candidates, and they are found from the rarest terms out:

* a document that shares ``need`` of the ``n`` terms holds at least one of the
  ``n - need + 1`` rarest (each term's postings counted first), so only their postings
  are walked, each document tested once for how many of the terms its title and
  purpose hold;
* ``need`` is what "most of the words" leaves (the share the caller asks for, less the
  words that are not terms: stopwords), and never more than the title's own terms, so a
  resource with the same title is always a candidate;
* the candidates are ordered before ``want`` of them in force are taken: first those
  whose title holds the most of the title's terms, then the shortest title (a
  resource with the same title holds all of them in the fewest words), then the most
  terms held, then storage order; only then is a candidate's resource read. Cut in
  storage order, a store with many near matches could leave the one with the same
  title out.

Only an index that reflects ``main`` answers (the freshness rule); otherwise None, and
the caller searches the usual way.
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Collection
from pathlib import Path
from typing import Any

from ..text import word_set
from .query import INDEX_FILE, index_meta, main_head, open_current
from .rows import FIELDS
from .tokenize import Tokenizer

__all__ = ["SimilarFinder"]

_TITLE, _PURPOSE = FIELDS.index("title"), FIELDS.index("purpose")
_HELD = f"(p.f{_TITLE} > 0 OR p.f{_PURPOSE} > 0)"
_HELD_Q = f"(q.f{_TITLE} > 0 OR q.f{_PURPOSE} > 0)"


class SimilarFinder:
    """Candidates for ``possibleConflicts`` from one read of the store's search index
    (open it with ``with``; each call reuses the connection, its snapshot and the
    resources not in force)."""

    def __init__(self, store_dir: Path, cache_dir: Path, share: float, want: int = 20) -> None:
        self.store_dir = store_dir
        self.cache_dir = cache_dir
        self.share = share
        self.want = want
        self._conn: sqlite3.Connection | None = None
        self._opened = False
        self._hidden: dict[str, Any] = {}
        self._tokenizer: Tokenizer | None = None
        self._df: dict[str, int] = {}  # each term's postings, counted once a batch

    def __enter__(self) -> SimilarFinder:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._conn is not None:
            self._conn.close()
        if self._tokenizer is not None:
            self._tokenizer.close()

    def _open(self) -> sqlite3.Connection | None:
        if not self._opened:
            self._opened = True
            control = self.store_dir / ".git"
            head = main_head(control)
            if head is not None:
                self._conn = open_current(control / INDEX_FILE, index_meta(head))
            if self._conn is not None:
                from ..errors import XbrainError
                from .resourcestanding import not_in_force

                try:
                    self._hidden = not_in_force(self.store_dir)
                except XbrainError:  # the facts cannot be read: a search says what it can
                    self._conn.close()
                    self._conn = None
                    return None
                self._tokenizer = Tokenizer(self.cache_dir)
        return self._conn

    def find(
        self, title: str, purpose: str, passed: set[str] | frozenset[str] = frozenset()
    ) -> list[dict[str, Any]] | None:
        """Resources in force whose title and purpose hold enough of the terms of
        ``title`` and ``purpose`` (at most ``want``, none of the ids ``passed``: those
        written with it), or None when the index cannot say."""
        conn = self._open()
        if conn is None or self._tokenizer is None:
            return None
        terms = self._tokenizer.query_terms(f"{title} {purpose}")
        titled = self._tokenizer.query_terms(title)
        own = len(titled)
        if not terms or not own:
            return None  # nothing the postings could find it by
        words = len(word_set(f"{title} {purpose}"))
        need = max(1, min(math.ceil(self.share * words) - max(0, words - len(terms)), own))
        try:
            return self._walk(conn, terms, titled, need, passed)
        except (sqlite3.Error, ValueError):  # damaged: a search says what it can
            return None

    def _walk(
        self,
        conn: sqlite3.Connection,
        terms: list[str],
        titled: list[str],
        need: int,
        passed: Collection[str],
    ) -> list[dict[str, Any]]:
        count = "SELECT COUNT(*) FROM postings WHERE term = ?"
        for term in terms:
            if term not in self._df:
                self._df[term] = conn.execute(count, (term,)).fetchone()[0]
        rarest = sorted(terms, key=lambda term: (self._df[term], term))[: len(terms) - need + 1]
        marks, own, first = (", ".join("?" * len(t)) for t in (terms, titled, rarest))
        sql = (
            "SELECT rid, doc FROM (SELECT d.doc, d.rid, "
            f"d.l{_TITLE} AS length, (SELECT COUNT(*) FROM postings q WHERE q.doc = d.doc "
            f"AND q.term IN ({marks}) AND {_HELD_Q}) AS held, (SELECT COUNT(*) FROM "
            f"postings q WHERE q.doc = d.doc AND q.term IN ({own}) AND q.f{_TITLE} > 0) "
            f"AS titled FROM docs d WHERE d.doc IN (SELECT p.doc FROM postings p "
            f"WHERE p.term IN ({first}) AND {_HELD})) WHERE held >= ? "
            "ORDER BY titled DESC, length, held DESC, doc"
        )
        found: list[dict[str, Any]] = []
        read = "SELECT resource FROM docs WHERE doc = ?"
        for rid, doc in conn.execute(sql, (*terms, *titled, *rarest, need)).fetchall():
            if rid in self._hidden or rid in passed:
                continue
            resource = json.loads(conn.execute(read, (doc,)).fetchone()[0])
            if isinstance(resource, dict) and all(
                isinstance(resource.get(key), str) for key in ("id", "title")
            ):
                found.append(resource)
            if len(found) >= self.want:
                break
        return found
