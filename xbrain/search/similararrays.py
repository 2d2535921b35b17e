"""A batch's conflict candidates counted and ordered with numpy: the calls of a
``SimilarFinder`` after its first (a single put never loads numpy).

The same candidates in the same order as the finder's own walk: the documents holding
``need`` of the terms (counted from the rarest ``len(terms) - need + 1`` terms' holders),
in tiers by how many of the title's terms their title holds, each tier ordered by the
shortest title, the most terms held, then storage order; title lengths read tier by tier.
A batch's fifty calls each count tens of thousands of holders at 100,000 resources, which
one by one in dicts cost most of its conflict check. Arrays are indexed by document
number: only for an index whose numbers run from 0 to ``ARRAY_DOCS`` (one damaged by
hand keeps the dict walk).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Collection
from typing import Any

from ..maththreads import numpy_one_thread
from .rows import FIELDS

__all__ = [
    "ARRAY_DOCS",
    "HOLDERS",
    "KEPT",
    "PURPOSE",
    "TITLE",
    "ArrayWalk",
    "arrays_fit",
    "title_lengths",
]

# up to this many documents (16 MB of counts; a store numbers its documents from 1)
ARRAY_DOCS = 4_000_000
TITLE, PURPOSE = FIELDS.index("title"), FIELDS.index("purpose")
HELD = f"(f{TITLE} > 0 OR f{PURPOSE} > 0)"
# a term's documents holding it in title or purpose, and whether in title
HOLDERS = f"SELECT doc, f{TITLE} > 0 FROM postings WHERE term = ? AND {HELD}"
# holders kept for a batch before the cache starts again: a bound on memory when a big
# batch's titles share few words
KEPT = 2_000_000
_CHUNK = 500  # documents read by one statement (SQLite binds at most 999 parameters)
Keep = Callable[[str, str, list[dict[str, Any]]], bool]


def title_lengths(
    conn: sqlite3.Connection, title: int, docs: list[int] | None
) -> list[tuple[Any, Any]]:
    """(document, title length) of ``docs`` (None: of every document, in one pass),
    read a few hundred at a time; a number without a document is left out."""
    column = f"l{title}"
    if docs is None:
        return conn.execute(f"SELECT doc, {column} FROM docs").fetchall()
    rows: list[tuple[Any, Any]] = []
    for at in range(0, len(docs), _CHUNK):
        chunk = docs[at : at + _CHUNK]
        marks = ", ".join("?" * len(chunk))
        sql = f"SELECT doc, {column} FROM docs WHERE doc IN ({marks})"
        rows += conn.execute(sql, chunk).fetchall()
    return rows


def arrays_fit(conn: sqlite3.Connection, last: int) -> int | None:
    """``last`` (the last document number) when every document number is within
    ``0..ARRAY_DOCS``, else None."""
    first = conn.execute("SELECT MIN(doc) FROM docs").fetchone()[0] or 0
    return last if int(first) >= 0 and last <= ARRAY_DOCS else None


class ArrayWalk:
    """Each term's title-or-purpose holders as sorted arrays, each document's title
    length, read once a batch (``kept``: holders kept before the cache starts again)."""

    def __init__(self, last: int, read: str, title: int, kept: int) -> None:
        self._last, self._read, self._title, self._bound = last, read, title, kept
        self._arrays: dict[str, tuple[Any, Any]] = {}
        self._kept = 0
        self._lengths_read: Any = None  # [doc]: whether its title length was read
        self._length_of: Any = None  # [doc]: its title length
        self._has_length: Any = None  # [doc]: whether it has a document (and a length)

    def _array(self, conn: sqlite3.Connection, term: str) -> tuple[Any, Any]:
        """The documents holding ``term`` in title or purpose, and in title, as sorted
        arrays (numbers past the last document dropped: none has a resource to list)."""
        import numpy as np

        got = self._arrays.get(term)
        if got is None:
            if self._kept > self._bound:  # a batch of varied titles on a big store
                self._arrays.clear()
                self._kept = 0
            rows = np.array(conn.execute(self._read, (term,)).fetchall(), np.int64)
            rows = rows.reshape(-1, 2)
            rows = rows[(rows[:, 0] >= 0) & (rows[:, 0] <= self._last)]
            docs = np.sort(rows[:, 0])  # sorted, as ``np.isin`` is fastest on
            got = self._arrays[term] = (docs, np.sort(rows[rows[:, 1] != 0, 0]))
            self._kept += len(docs)
        return got

    def _lengths(self, conn: sqlite3.Connection, docs: Any) -> Any:
        """Each document's title length, indexed by document number (``_has_length``
        says which have one), read for ``docs``: one by one while a batch has needed
        few, every document's in one pass once it needs a tenth of them."""
        import numpy as np

        if self._length_of is None:
            self._length_of = np.zeros(self._last + 1, np.int64)
            self._has_length = np.zeros(self._last + 1, bool)
            self._lengths_read = np.zeros(self._last + 1, bool)
        unread = docs[~self._lengths_read[docs]]
        if not len(unread):
            return self._length_of
        if len(unread) + int(self._lengths_read.sum()) > self._last // 10:
            unread = np.flatnonzero(~self._lengths_read)  # every one left, in one pass
            rows = title_lengths(conn, self._title, None)
        else:
            rows = title_lengths(conn, self._title, unread.tolist())
        if rows:
            found = np.array(rows, np.int64).reshape(-1, 2)
            found = found[(found[:, 0] >= 0) & (found[:, 0] <= self._last)]
            self._length_of[found[:, 0]] = found[:, 1]
            self._has_length[found[:, 0]] = True
        self._lengths_read[unread] = True
        return self._length_of

    def walk(
        self,
        conn: sqlite3.Connection,
        terms: list[str],
        titled: list[str],
        need: int,
        passed: Collection[str],
        keep: Keep,
    ) -> list[dict[str, Any]]:
        """The candidates in order, read until ``keep`` (the finder's: adds a resource in
        force to the list, says whether it is full) says the list is full."""
        np = numpy_one_thread()  # BLAS, never called here, spins its workers otherwise
        sets = sorted((self._array(conn, term)[0] for term in terms), key=len)
        cut = len(terms) - need + 1
        held = np.zeros(self._last + 1, np.int32)
        for docs in sets[:cut]:
            held[docs] += 1
        for docs in sets[cut:]:
            held[docs[held[docs] > 0]] += 1
        candidates = np.flatnonzero(held >= need)
        own = np.zeros(len(candidates), np.int32)
        for term in titled:
            own += np.isin(candidates, self._array(conn, term)[1], assume_unique=True)
        read = "SELECT rid, resource FROM docs WHERE doc = ?"
        found: list[dict[str, Any]] = []
        for tier in np.unique(own)[::-1].tolist():  # the most of the title's terms first
            docs = candidates[own == tier]
            length = self._lengths(conn, docs)[docs]  # read for this tier only
            there = self._has_length[docs]  # not a posting without its document
            docs, length = docs[there], length[there]
            # the shortest title, the most terms held, storage order
            for doc in docs[np.lexsort((docs, -held[docs], length))].tolist():
                rid, text = conn.execute(read, (doc,)).fetchone()
                if rid not in passed and keep(rid, text, found):
                    return found
        return found
