"""The resources a new one may conflict with, read from the title and purpose postings.

A write's ``possibleConflicts`` are the resources in force with the same title, or most
of the same title and purpose words (``resourcereview.conflicts`` decides). Ranking the
whole store for the title and purpose (a search) scores every document that holds any
of their words: in a store whose titles share their words, that is every document, for
each resource written. Here only documents that hold enough of the terms in their title
or purpose are candidates, and they are found from the rarest terms out:

* a document that shares ``need`` of the ``n`` terms holds at least one of the
  ``n - need + 1`` held by the fewest documents, so only their holders are counted, the
  other terms' only looked up for them;
* each term's holders (title or purpose, title) are read once for a batch and counted in
  memory: a batch's titles share their words (``OPTIONS``, ``NOTES``: tens of thousands
  of holders in a big store), and a query for each resource written that tested every
  candidate's terms one by one cost most of a batch's time at 100,000 resources;
* ``need`` is what "most of the words" leaves (the share the caller asks for, less the
  words that are not terms: stopwords), and never more than the title's own terms, so a
  resource with the same title is always a candidate;
* the candidates are ordered before ``want`` of them in force are taken: first those
  whose title holds the most of the title's terms, then the shortest title (a
  resource with the same title holds all of them in the fewest words), then the most
  terms held, then storage order (the title lengths read once for a batch too); only
  then is a candidate's resource read, the first few in that order. Cut in
  storage order, a store with many near matches could leave the one with the same
  title out.

A single put into a big store whose title's words are in thousands of titles is the
exception: ordering every candidate would cost most of the write, so its one call
(``LAZY_FROM``) lists those whose title holds every term of the title first, the shortest
title first, then the others in storage order — read lazily (``_lazy``).

A batch's calls after the first count and order the same candidates with numpy
(:mod:`.similararrays`; a single put never loads it). Only an index that reflects
``main`` answers (the freshness rule); otherwise None, and the caller searches.
"""

from __future__ import annotations

import heapq
import json
import math
import sqlite3
from collections import Counter
from collections.abc import Collection, Sequence
from itertools import compress
from operator import neg
from pathlib import Path
from typing import Any

from ..text import word_set
from . import similarahead
from .countahead import worth
from .query import INDEX_FILE, index_meta, main_head, open_current
from .similararrays import HOLDERS as _READ
from .similararrays import KEPT, ArrayWalk, arrays_fit, title_lengths
from .similararrays import PURPOSE as _PURPOSE
from .similararrays import TITLE as _TITLE
from .tokenize import Tokenizer

__all__ = ["SimilarFinder"]

_HELD_P = f"(p.f{_TITLE} > 0 OR p.f{_PURPOSE} > 0)"
_HELD_Q = f"(q.f{_TITLE} > 0 OR q.f{_PURPOSE} > 0)"
# A first call whose terms' postings pass this (a single put into a big store, its title's
# words in thousands of titles) does not order every candidate: too costly for one write
# (0.8 s for a common title at 100,000); see ``_lazy``
LAZY_FROM = 5_000
_SPARE = 10  # candidates the helper lists beyond ``want`` (some may not be in force)
_JOINED = "FROM postings p JOIN docs d ON d.doc = p.doc WHERE p.term = ? AND"
_COUNT = "(SELECT COUNT(*) FROM postings q WHERE q.doc = d.doc AND q.term IN"


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
        self._tries = 0  # opening the index: again once, after a search built it
        self._hidden: dict[str, Any] = {}
        self._tokenizer: Tokenizer | None = None
        # read once a batch: each term's documents (title or purpose, title), each
        # document's title length
        self._held: dict[str, dict[int, int]] = {}
        self._titled: dict[str, set[int]] = {}
        self._length: dict[int, int] = {}
        self._scanned = False
        self._kept = 0  # holders kept (see KEPT)
        self._calls = 0
        self._df: dict[str, int] = {}  # each term's postings (any field), counted once
        self._docs: int | None = None  # the last document number: how many it holds, about
        # the same from a batch's second call, as arrays (when they fit: ``_arrays``)
        self._walker: ArrayWalk | None = None
        self._fit_checked = False
        # a batch's later calls counted ahead by a helper process (``ahead``), the write's
        # (parent, commit) (``landed``), the index file this finder reads
        self._ahead: similarahead.Ahead | None = None
        self._asked: dict[tuple[str, str], tuple[int, Collection[str]]] = {}
        self._terms: dict[tuple[str, str], tuple[list[str], list[str], int] | None] = {}
        self._landed: tuple[str | None, str | None] = (None, None)
        self._file: list[Any] | None = None
        self._head: str | None = None  # the commit the index read reflects

    def __enter__(self) -> SimilarFinder:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._ahead is not None:
            self._ahead.close()
        if self._conn is not None:
            self._conn.close()
        if self._tokenizer is not None:
            self._tokenizer.close()

    def _open(self) -> sqlite3.Connection | None:
        if self._conn is None and self._tries < 2:  # (a store's first write: see below)
            self._tries += 1
            control = self.store_dir / ".git"
            head = main_head(control)
            if head is not None:
                before = similarahead.file_id(control / INDEX_FILE)
                self._conn = open_current(control / INDEX_FILE, index_meta(head))
                self._file = similarahead.which(control / INDEX_FILE, before, self._conn)
                self._head = head
            if self._conn is not None:
                from ..errors import XbrainError
                from .resourcestanding import not_in_force

                try:
                    self._hidden = not_in_force(self.store_dir)
                except XbrainError:  # the facts cannot be read: a search says what it can
                    self._conn.close()
                    self._conn = None
                    return None
                if self._tokenizer is None:
                    self._tokenizer = Tokenizer(self.cache_dir)
        return self._conn

    def _ask(self, title: str, purpose: str) -> tuple[list[str], list[str], int] | None:
        """The terms of ``title`` and ``purpose``, those of the title, and how many of
        them a candidate holds; None when the postings could find nothing by them (cut
        once: ``ahead`` asks before the write what ``find`` asks after it)."""
        key = (title, purpose)
        if key not in self._terms:
            self._terms[key] = self._cut(title, purpose)
        return self._terms[key]

    def _cut(self, title: str, purpose: str) -> tuple[list[str], list[str], int] | None:
        if self._tokenizer is None:
            self._tokenizer = Tokenizer(self.cache_dir)
        terms = self._tokenizer.query_terms(f"{title} {purpose}")
        titled = self._tokenizer.query_terms(title)
        own = len(titled)
        if not terms or not own:
            return None
        words = len(word_set(f"{title} {purpose}"))
        need = max(1, min(math.ceil(self.share * words) - max(0, words - len(terms)), own))
        return terms, titled, need

    def ahead(
        self,
        asks: list[tuple[str, str, Collection[str]]],
        batch: Collection[str],
        written: Sequence[dict[str, Any]],
    ) -> None:
        """Before a batch is written: a helper counts the candidates of the calls ``asks``
        (title, purpose, ids passed over; ``batch``: the ids written) after cutting the
        index terms of ``written`` when that pays (:mod:`.similarahead`, ``.countahead``)."""
        sent: list[similarahead.Ask] = []
        for title, purpose, passed in asks:
            found = self._ask(title, purpose)
            if found is not None and (title, purpose) not in self._asked:
                self._asked[(title, purpose)] = (len(sent), passed)
                sent.append((*found, passed))
        texts = None
        if len(written) >= similarahead.BATCH_MIN:
            texts = worth(self.cache_dir, self.store_dir / ".git" / INDEX_FILE, written)
        self._ahead = similarahead.start(self.store_dir, self.want + _SPARE, sent, batch, texts)

    def landed(self, parent: str | None, commit: str | None) -> None:
        """The batch is written: ``commit``, on top of ``parent`` (None: nothing was)."""
        self._landed = (parent, commit)

    def find(
        self, title: str, purpose: str, passed: set[str] | frozenset[str] = frozenset()
    ) -> list[dict[str, Any]] | None:
        """Resources in force whose title and purpose hold enough of the terms of
        ``title`` and ``purpose`` (at most ``want``, none of the ids ``passed``: those
        written with it), or None when the index cannot say. With none at the head (a
        store's first write), the search that answers instead builds it: opened next."""
        conn = self._open()
        if conn is None:
            return None
        ask = self._ask(title, purpose)
        if ask is None:
            return None  # nothing the postings could find it by
        terms, titled, need = ask
        self._calls += 1
        try:
            if self._calls == 1 and self._many(conn, terms, need):
                return self._lazy(conn, terms, titled, need, passed)
            if self._calls > 1:  # (a first call may be lazy: never the helper's)
                counted = self._counted(conn, title, purpose, passed)
                if counted is not None:
                    return counted
            walker = None if self._calls == 1 else self._arrays(conn)  # a single put: numpy
            if walker is None:  # is not worth loading
                return self._walk(conn, terms, titled, need, passed)
            return walker.walk(conn, terms, titled, need, passed, self._keep)
        except (sqlite3.Error, ValueError, TypeError):  # damaged: a search says what it can
            return None

    def _counted(
        self, conn: sqlite3.Connection, title: str, purpose: str, passed: Collection[str]
    ) -> list[dict[str, Any]] | None:
        """The helper's answer for this call, taken as the walk takes its candidates;
        None when there is none to take (then the walk answers)."""
        asked = self._asked.get((title, purpose))
        if self._ahead is None or asked is None or asked[1] != passed:
            return None
        got = self._ahead.answer(asked[0], self._landed, self._head, self._file)
        if got is None:
            return None
        rids, more = got
        found: list[dict[str, Any]] = []
        for rid in rids:
            row = conn.execute("SELECT resource FROM docs WHERE rid = ?", (rid,)).fetchone()
            if row is None:
                return None  # not the index the helper read: the walk decides
            if rid not in passed and self._keep(rid, row[0], found):
                return found
        return None if more else found

    def _many(self, conn: sqlite3.Connection, terms: list[str], need: int) -> bool:
        """Whether the candidates may be too many to order for one call: the postings of
        the terms of which a candidate holds one (any field: a bound) pass ``LAZY_FROM``."""
        count = "SELECT COUNT(*) FROM postings WHERE term = ?"
        for term in terms:
            if term not in self._df:
                self._df[term] = conn.execute(count, (term,)).fetchone()[0]
        fewest = sorted(self._df[term] for term in terms)[: len(terms) - need + 1]
        return sum(fewest) > LAZY_FROM

    def _lazy(
        self,
        conn: sqlite3.Connection,
        terms: list[str],
        titled: list[str],
        need: int,
        passed: Collection[str],
    ) -> list[dict[str, Any]]:
        """The candidates of a first call with too many to order: those whose title holds
        every term of the title (a same title among them), the shortest title first, then
        the others in storage order until ``want`` — read lazily, never all of them."""
        own, every = ", ".join("?" * len(set(titled))), ", ".join("?" * len(terms))
        rarest = sorted(terms, key=lambda term: (self._df[term], term))
        first = min(titled, key=lambda term: (self._df[term], term))
        top = (
            f"SELECT d.rid, d.resource {_JOINED} p.f{_TITLE} > 0 AND {_COUNT} ({own}) AND "
            f"q.f{_TITLE} > 0) = ? ORDER BY d.l{_TITLE}, p.doc"
        )
        rest = (
            f"SELECT d.rid, d.resource {_JOINED} {_HELD_P} AND {_COUNT} ({every}) AND "
            f"{_HELD_Q}) >= ? ORDER BY p.doc"
        )
        found: list[dict[str, Any]] = []
        seen: set[str] = set(passed)
        asks = [(top, (first, *set(titled), len(set(titled))))]
        asks += [(rest, (term, *terms, need)) for term in rarest[: len(terms) - need + 1]]
        for sql, params in asks:
            for rid, text in conn.execute(sql, params):
                if rid not in seen:
                    seen.add(rid)
                    if self._keep(rid, text, found):
                        return found
        return found

    def _postings(self, conn: sqlite3.Connection, term: str) -> tuple[dict[int, int], set[int]]:
        """The documents holding ``term`` in their title or purpose, and those holding it
        in their title (read once a batch: a batch's titles share their words)."""
        held = self._held.get(term)
        if held is None:
            if self._kept > KEPT:  # a batch of varied titles on a big store: start again
                self._held.clear()
                self._titled.clear()
                self._kept = 0
            held = self._held[term] = dict(conn.execute(_READ, (term,)))
            # the title holders among them (a title holder holds it in title or purpose)
            self._titled[term] = set(compress(held, held.values()))
            self._kept += len(held)
        return held, self._titled[term]

    def _lengths(self, conn: sqlite3.Connection, docs: Collection[int]) -> dict[int, int]:
        """Each document's title length, read once a batch: one by one while a batch has
        needed few, every document's in one pass once it needs a tenth of them."""
        if self._scanned:
            return self._length
        unread = [doc for doc in docs if doc not in self._length]
        self._scanned = len(self._length) + len(unread) > self._last_doc(conn) // 10
        self._length.update(title_lengths(conn, _TITLE, None if self._scanned else unread))
        return self._length

    def _keep(self, rid: str, text: str, found: list[dict[str, Any]]) -> bool:
        """Add the resource ``text`` (of ``rid``) to ``found`` when it is in force and
        reads as a resource (a damaged row is passed over); whether ``found`` is full."""
        if rid not in self._hidden:
            resource = json.loads(text)
            if isinstance(resource, dict) and all(
                isinstance(resource.get(key), str) for key in ("id", "title")
            ):
                found.append(resource)
        return len(found) >= self.want

    def _walk(
        self,
        conn: sqlite3.Connection,
        terms: list[str],
        titled: list[str],
        need: int,
        passed: Collection[str],
    ) -> list[dict[str, Any]]:
        # a document holding ``need`` of the terms holds one of the ``len(terms) - need
        # + 1`` held by the fewest: counted from theirs, the others only looked up
        sets = sorted((self._postings(conn, term)[0] for term in terms), key=len)
        cut = len(terms) - need + 1
        held: Counter[int] = Counter()
        for holders in sets[:cut]:
            held.update(holders.keys())
        for holders in sets[cut:]:
            held.update(holders.keys() & held.keys())
        candidates = set(compress(held, map(need.__le__, held.values())))
        own: Counter[int] = Counter()
        for term in titled:
            own.update(self._postings(conn, term)[1] & candidates)
        tiers: dict[int, list[int]] = {0: list(candidates - own.keys())}
        for doc, count in own.items():
            tiers.setdefault(count, []).append(doc)
        found: list[dict[str, Any]] = []
        for tier in sorted(tiers, reverse=True):  # the most of the title's terms first
            self._take(conn, tiers[tier], held, passed, found)
            if len(found) >= self.want:
                break
        return found

    def _take(
        self,
        conn: sqlite3.Connection,
        docs: list[int],
        held: Counter[int],
        passed: Collection[str],
        found: list[dict[str, Any]],
    ) -> None:
        """Add to ``found`` the resources of ``docs`` (as many of the title's terms in
        their title) in force, until ``want``: the shortest title first, then the most
        terms held, then storage order (compared as tuples: no Python call for each
        document); only the first few put in order, the next few when resources not in
        force (or written with this one) left too few."""
        length = self._lengths(conn, docs)
        docs = list(filter(length.__contains__, docs))  # a posting without its document
        order = list(
            zip(
                map(length.__getitem__, docs),
                map(neg, map(held.__getitem__, docs)),
                docs,
                strict=True,
            )
        )
        read = "SELECT rid, resource FROM docs WHERE doc = ?"
        taken, more = 0, self.want
        while taken < len(order) and len(found) < self.want:
            more = min(2 * more, len(order))
            for *_, doc in heapq.nsmallest(more, order)[taken:]:
                rid, text = conn.execute(read, (doc,)).fetchone()
                if rid not in passed and self._keep(rid, text, found):
                    break
            taken = more

    def _last_doc(self, conn: sqlite3.Connection) -> int:
        if self._docs is None:
            self._docs = int(conn.execute("SELECT MAX(doc) FROM docs").fetchone()[0] or 0)
        return self._docs

    def _arrays(self, conn: sqlite3.Connection) -> ArrayWalk | None:
        """The array walk of a batch's later calls, made at the first (the first call's
        dict caches dropped), or None where the document numbers do not suit arrays."""
        if not self._fit_checked:
            self._fit_checked = True
            last = arrays_fit(conn, self._last_doc(conn))
            if last is not None:
                self._walker = ArrayWalk(last, _READ, _TITLE, KEPT)
                self._held.clear()
                self._titled.clear()
                self._kept = 0
        return self._walker
