"""A team layer's postings held in memory by ``xbrain serve``, to pick what the SQL ranks.

A team layer changes only when it is pulled, and a server lives long: the SQL ranking
(``scoring.py``) over a team of 10,000 manual pages costs some 10 ms a prompt, nearly
all of it grouping the postings of a prompt's common words. A server keeps instead, per
kept connection of a team layer's index (:mod:`.kept`), every term's postings as two
arrays (the documents, and the term's BM25F pseudo-frequency in each: the fields'
counts, length-normalized and weighted as the SQL does), beside each document's length.
With them every document's score is computed at once (numpy) from the same plan the SQL
uses, and only the documents that can be among the best ``limit`` — matching enough of
the query's terms (the 35 % rule) and scoring within a relative ``MARGIN`` of the
``limit``-th best — are handed to the SQL ranking, which ranks them as ever: the answer
is the SQL's own.

Why the margin is safe: both computations add, multiply and divide the same positive
quantities in another order (and take ``exp`` of the same values), so each score here is
within a relative 1e-12 of the SQL's; the SQL orders by the score rounded to 9 places,
so a document of its top ``limit`` scores at least the ``limit``-th best less 1e-9. A
document within ``MARGIN`` (1e-6, relative) plus ``ABSOLUTE`` (1e-8) of the
``limit``-th best computed here is therefore never left out.

The arrays are read inside a request's read transaction and tied to the connection's
``PRAGMA data_version`` (which any other connection's commit changes) and to the field
averages they were weighted with; a connection whose file is replaced is a new one. A
query that finds them missing or stale is ranked by the SQL alone, and asks the server
to read them again once no request waits (:func:`.kept.later`), so a pull is never
answered from the arrays of before it. Only within :class:`in_memory` (the team layers'
reads), only on a kept connection, only with numpy, and only for an index of at least
``FROM_DOCUMENTS`` and at most ``MAX_DOCUMENTS`` documents and ``MAX_POSTINGS`` postings.
"""

from __future__ import annotations

import sqlite3
import time
from contextvars import ContextVar
from typing import Any

from . import kept
from .rows import FIELDS
from .scoring import LEAST_CHANCE, Plan

__all__ = ["Postings", "in_memory", "pick", "read_postings"]

FROM_DOCUMENTS = 500  # fewer: the SQL is quick enough
MAX_DOCUMENTS = 50_000
MAX_POSTINGS = 5_000_000  # 12 bytes each in memory (a 10,000-page team: 553,000)
MARGIN = 1e-6  # relative, below the limit-th best score: see the module
ABSOLUTE = 1e-8  # and absolute (the SQL rounds to 9 places)
# more documents than this within the margin (ties): the SQL ranks without them
MAX_CANDIDATES = 2_000 if sqlite3.sqlite_version_info >= (3, 32) else 500
_CHUNK = 20_000  # postings converted at once while reading
_READ_CACHE_KIB = 2048
_KEY = "postings"

_ON: ContextVar[bool] = ContextVar("in_memory", default=False)


class in_memory:
    """Within the block, a kept index may be ranked with its postings in memory."""

    def __enter__(self) -> None:
        self.token = _ON.set(True)

    def __exit__(self, *exc: object) -> None:
        _ON.reset(self.token)


class Postings:
    """One snapshot of an index: per term its documents (positions in ``docs``) and
    pseudo-frequencies, each document's length; what it was read with."""

    def __init__(
        self,
        version: int,
        fields: list[tuple[float, float, float]],
        docs: Any,
        lengths: Any,
        terms: dict[str, int],
        offsets: Any,
        where: Any,
        x: Any,
        seconds: float,
    ) -> None:
        self.version = version
        self.fields = fields
        self.docs = docs  # the documents' numbers, ascending
        self.lengths = lengths  # each document's length (its fields' together)
        self.terms = terms  # term -> its slice offsets[k]:offsets[k + 1] of where and x
        self.offsets = offsets
        self.where = where
        self.x = x
        self.seconds = seconds  # how long the read took

    def term(self, form: str) -> tuple[Any, Any]:
        """(positions in ``docs``, pseudo-frequencies) of the documents holding ``form``."""
        k = self.terms.get(form)
        if k is None:
            return self.where[:0], self.x[:0]
        start, end = int(self.offsets[k]), int(self.offsets[k + 1])
        return self.where[start:end], self.x[start:end]


def _numpy() -> Any:
    try:
        import numpy
    except ImportError:  # numpy comes with the semantic extra
        return None
    return numpy


def pick(
    conn: sqlite3.Connection,
    plan: Plan,
    limit: int,
    candidates: list[int] | None,
    weighting: tuple[tuple[float, ...], tuple[float, ...]],
) -> list[int] | None:
    """The documents the SQL must rank for the top ``limit`` of ``plan`` (among
    ``candidates`` when given), ascending; None when this cannot tell (the SQL then
    ranks as it would have). ``weighting``: the fields' weights and length
    normalization, for the arrays read again when they are stale."""
    held = kept.held(conn) if _ON.get() else None
    if held is None:
        return None
    found = held.get(_KEY)
    version = conn.execute("PRAGMA data_version").fetchone()[0]
    if isinstance(found, tuple) and found[0] == version:
        return None  # this snapshot's postings are too many, or its documents too few
    if not isinstance(found, Postings) or found.version != version or found.fields != plan.fields:
        held.pop(_KEY, None)  # of another snapshot: never used again
        kept.later(conn, _KEY, lambda again: _refresh(again, weighting))
        return None
    return _within_margin(conn, found, plan, limit, candidates)


def _refresh(
    conn: sqlite3.Connection, weighting: tuple[tuple[float, ...], tuple[float, ...]]
) -> None:
    """Read the arrays of ``conn``'s index anew, in a read transaction of its own."""
    held = kept.held(conn)
    if held is None:
        return
    held.pop(_KEY, None)
    # every page of the postings is read once: through a small cache, so that the
    # connection's own (``kept.CACHE_KIB``) does not grow to hold them all
    conn.execute(f"PRAGMA cache_size = -{_READ_CACHE_KIB}")
    try:
        conn.execute("BEGIN")
        read = read_postings(conn, weighting)
    except sqlite3.Error:
        return  # the next query asks again
    finally:
        kept.release(conn)
        conn.execute(f"PRAGMA cache_size = -{kept.CACHE_KIB}")
    if read is not None:
        held[_KEY] = read


def read_postings(
    conn: sqlite3.Connection, weighting: tuple[tuple[float, ...], tuple[float, ...]]
) -> Postings | tuple[int, str] | None:
    """The postings of the index ``conn`` reads (inside the caller's read transaction):
    the arrays; or (its ``data_version``, why not) for an index too big or too small to
    be worth it; None without numpy."""
    np = _numpy()
    if np is None:
        return None
    started = time.process_time()
    version = conn.execute("PRAGMA data_version").fetchone()[0]
    lengths = ", ".join(f"l{i}" for i in range(len(FIELDS)))
    rows = conn.execute(f"SELECT doc, {lengths} FROM docs ORDER BY doc").fetchall()
    if len(rows) > MAX_DOCUMENTS:
        return (version, "too many documents")
    if len(rows) < max(FROM_DOCUMENTS, 1):
        return (version, "too few documents")
    table = np.array(rows, dtype=np.int64)
    docs, field_lengths = table[:, 0], table[:, 1:].astype(np.float64)
    totals = dict(conn.execute("SELECT field, length FROM totals").fetchall())
    count = len(docs)
    weights, normalization = weighting
    fields = [  # as ranking's plan computes them (the same floats)
        (weight, 1.0 - b, b / (totals.get(i, 0) / count or 1.0))
        for i, (weight, b) in enumerate(zip(weights, normalization, strict=True))
    ]
    counted = conn.execute("SELECT term, COUNT(*) FROM postings GROUP BY term").fetchall()
    sizes = np.array([n for _, n in counted], dtype=np.int64)
    if int(sizes.sum()) > MAX_POSTINGS:
        return (version, "too many postings")
    offsets = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    where = np.empty(int(offsets[-1]), dtype=np.int32)
    x = np.empty(int(offsets[-1]), dtype=np.float64)
    cursor = conn.execute(
        f"SELECT doc, {', '.join(f'f{i}' for i in range(len(FIELDS)))} FROM postings "
        "ORDER BY term, doc"
    )
    at = 0
    while chunk := cursor.fetchmany(_CHUNK):
        part = np.array(chunk, dtype=np.int64)
        if at + len(part) > len(x):
            return None  # not the snapshot the counts were read in: never so in a transaction
        spots = np.searchsorted(docs, part[:, 0])
        sums = np.zeros(len(part), dtype=np.float64)
        for i, (weight, flat, per) in enumerate(fields):
            sums += weight * part[:, i + 1] / (flat + per * field_lengths[spots, i])
        where[at : at + len(part)], x[at : at + len(part)] = spots, sums
        at += len(part)
    terms = {term: k for k, (term, _) in enumerate(counted)}
    total = field_lengths.sum(axis=1)
    seconds = time.process_time() - started
    return Postings(version, fields, docs, total, terms, offsets, where, x, seconds)


def _within_margin(
    conn: sqlite3.Connection,
    postings: Postings,
    plan: Plan,
    limit: int,
    candidates: list[int] | None,
) -> list[int] | None:
    """The documents that can be among the best ``limit`` (see the module)."""
    np = _numpy()
    count = len(postings.docs)
    matched = np.zeros(count, dtype=np.int32)
    legs = [np.zeros(count), np.zeros(count), np.zeros(count), np.zeros(count)]
    es, ec, ss, sc = legs
    lengths = postings.lengths

    def cover(weight: float, odds: float, at: Any) -> Any:
        if plan.cover_by == "count":
            return np.ones(len(at))
        if plan.cover_by == "idf":
            return np.full(len(at), weight)
        return weight * np.maximum(np.exp(odds * lengths[at]), LEAST_CHANCE)

    for pos, term in enumerate(plan.terms):
        if plan.forms[pos][0] != term:
            return None  # not the plan this was written for
        read = [postings.term(form) for form in plan.forms[pos]]
        at, x = read[0]  # the term as asked: a document holds it once
        ie, io = plan.exact[pos]
        es[at] += np.where(x > 0, ie * x / (x + plan.k1), 0.0)
        ec[at] += cover(ie, io, at)
        if not plan.blend:
            matched[at] += 1
            continue
        every = np.concatenate([where for where, _ in read])
        summed = np.bincount(every, weights=np.concatenate([x for _, x in read]), minlength=count)
        holding = np.flatnonzero(np.bincount(every, minlength=count))
        matched[holding] += 1
        istem, so = plan.stem[pos]
        ss[holding] += istem * summed[holding] / (summed[holding] + plan.k1)
        sc[holding] += cover(istem, so, holding)
    eligible = matched >= plan.need
    if candidates is not None:
        eligible &= np.isin(postings.docs, np.array(candidates, dtype=np.int64))
    at = np.flatnonzero(eligible)
    if len(at) > limit:
        whole = _wholes(plan)
        power = plan.coordination
        score = es[at] * (ec[at] / whole[0]) ** power
        if plan.blend:
            score += plan.blend * ss[at] * (sc[at] / whole[1]) ** power
        score /= 1.0 + plan.blend
        least = float(np.partition(score, len(score) - limit)[len(score) - limit])
        at = at[score >= least - (MARGIN * abs(least) + ABSOLUTE)]
    if len(at) > MAX_CANDIDATES:
        return None
    return [int(doc) for doc in postings.docs[at]]


def _wholes(plan: Plan) -> tuple[float, float]:
    """What each ranking's coverage is a share of (as ``scoring`` divides)."""
    if plan.cover_by == "count":
        return float(len(plan.terms)), float(len(plan.terms))
    return sum(w for w, _ in plan.exact), sum(w for w, _ in plan.stem)
