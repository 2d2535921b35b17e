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

The arrays are read in a read transaction of their own, once no request waits (a
query that finds them missing or stale asks for it: :func:`.kept.later`, run by the
server's loop), and tied to the connection's ``PRAGMA data_version`` (which any other
connection's commit changes) and to the field averages they were weighted with; a
connection whose file is replaced is a new one. A query that finds them missing or
stale is ranked by the SQL alone, so a pull is never answered from the arrays of before
it. A team of 10,000 manual pages: 553,000 postings, 7 MB of arrays, read in some 0.4 s
of CPU (its 1,000 skills: 0.07 s). Only within :class:`in_memory` (the team layers'
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
# more documents than this within the margin (ties): the SQL ranks as without memory
MAX_CANDIDATES = 2_000 if sqlite3.sqlite_version_info >= (3, 32) else 500
_CHUNK = 20_000  # postings converted at once while reading
LEGS_KEPT = 1_000_000  # values (8 bytes each) of the query terms' legs kept per snapshot
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
        # per query term (its forms and statistics): what it adds to each document that
        # holds it, kept for the next prompts (common words recur), up to LEGS_KEPT
        self.legs: dict[Any, tuple[Any, ...]] = {}
        self.kept = 0

    def term(self, form: str) -> tuple[Any, Any]:
        """(positions in ``docs``, pseudo-frequencies) of the documents holding ``form``."""
        k = self.terms.get(form)
        if k is None:
            return self.where[:0], self.x[:0]
        start, end = int(self.offsets[k]), int(self.offsets[k + 1])
        return self.where[start:end], self.x[start:end]


class _Orphan(Exception):
    """A posting names a document the index does not hold."""


def _numpy() -> Any:
    try:
        import numpy
    except ImportError:  # a dependency; an install without it ranks by SQL alone
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
    held = kept.held(conn) if _ON.get() and limit > 0 else None
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
    held[_KEY] = read


def read_postings(
    conn: sqlite3.Connection, weighting: tuple[tuple[float, ...], tuple[float, ...]]
) -> Postings | tuple[int, str]:
    """The postings of the index ``conn`` reads (inside the caller's read transaction):
    the arrays; or (its ``data_version``, why not: too big, too small to be worth it, no
    numpy), so that the snapshot is not read again."""
    started = time.process_time()
    version = conn.execute("PRAGMA data_version").fetchone()[0]
    np = _numpy()
    if np is None:
        return (version, "no numpy")
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

    def weighed(part: Any) -> tuple[Any, Any]:
        """(positions in ``docs``, pseudo-frequencies) of postings (doc, f0 … f5)."""
        spots = np.searchsorted(docs, part[:, 0])
        inside = np.minimum(spots, count - 1)
        if len(part) and ((spots >= count).any() or (docs[inside] != part[:, 0]).any()):
            raise _Orphan  # a posting without its document (a damaged index): SQL alone
        sums = np.zeros(len(part), dtype=np.float64)
        for i, (weight, flat, per) in enumerate(fields):
            sums += weight * part[:, i + 1] / (flat + per * field_lengths[spots, i])
        return spots.astype(np.int32), sums

    try:
        read = _packed(conn, np, weighed) or _by_rows(conn, np, weighed)
    except _Orphan:
        return (version, "a posting without its document")
    if isinstance(read, str):
        return (version, read)
    counted, parts = read
    sizes = np.array([n for _, n in counted], dtype=np.int64)
    offsets = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    where = np.concatenate([spots for spots, _ in parts] or [np.zeros(0, np.int32)])
    x = np.concatenate([sums for _, sums in parts] or [np.zeros(0)])
    if len(x) != int(offsets[-1]):
        return (version, "changed while read")  # never so within a read transaction
    terms = {term: k for k, (term, _) in enumerate(counted)}
    total = field_lengths.sum(axis=1)
    seconds = time.process_time() - started
    return Postings(version, fields, docs, total, terms, offsets, where, x, seconds)


# a posting as one integer (where every count fits): its document, then each field's
# count, the text's widest; 63 bits
_BITS = (20, 6, 6, 6, 6, 6, 13)
_COLUMNS = ("doc", *(f"f{i}" for i in range(len(FIELDS))))
_SHIFTS = [sum(_BITS[:i]) for i in range(len(_BITS))]
_PACKED = (
    "SELECT term, COUNT(*), "
    + " AND ".join(f"max({c}) < {1 << b}" for c, b in zip(_COLUMNS, _BITS, strict=True))
    + f" AND min({', '.join(f'min({c})' for c in _COLUMNS)}) >= 0, group_concat("
    + " | ".join(f"({c} << {s})" for c, s in zip(_COLUMNS, _SHIFTS, strict=True))
    + ") FROM postings GROUP BY term ORDER BY term"
)

Weighed = tuple[list[tuple[str, int]], list[tuple[Any, Any]]]


def _packed(conn: sqlite3.Connection, np: Any, weighed: Any) -> Weighed | str | None:
    """Every term and its count, and its postings weighed (``weighed``: of an array of
    rows doc, f0 … f5), read as one text of integers per term (a third of the time of a
    row each); None when a count does not fit (:func:`_by_rows` reads them)."""
    counted: list[tuple[str, int]] = []
    parts: list[tuple[Any, Any]] = []
    texts: list[str] = []
    pending = total = 0
    masks = np.array([(1 << b) - 1 for b in _BITS], dtype=np.int64)

    def parse() -> None:
        values = np.fromstring(",".join(texts), dtype=np.int64, sep=",")
        part = (values[:, None] >> np.array(_SHIFTS, dtype=np.int64)) & masks
        parts.append(weighed(part))
        texts.clear()

    for term, n, fits, text in conn.execute(_PACKED):
        if not fits:
            return None
        total += n
        if total > MAX_POSTINGS:
            return "too many postings"
        counted.append((term, n))
        texts.append(text)
        pending += n
        if pending >= _CHUNK:
            parse()
            pending = 0
    if texts:
        parse()
    return counted, parts


def _by_rows(conn: sqlite3.Connection, np: Any, weighed: Any) -> Weighed | str:
    """As :func:`_packed`, a row per posting."""
    counted = conn.execute(
        "SELECT term, COUNT(*) FROM postings GROUP BY term ORDER BY term"
    ).fetchall()
    if sum(n for _, n in counted) > MAX_POSTINGS:
        return "too many postings"
    cursor = conn.execute(f"SELECT {', '.join(_COLUMNS)} FROM postings ORDER BY term, doc")
    parts = []
    while chunk := cursor.fetchmany(_CHUNK):
        parts.append(weighed(np.array(chunk, dtype=np.int64)))
    return counted, parts


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
    es, ec, ss, sc = np.zeros(count), np.zeros(count), np.zeros(count), np.zeros(count)
    for pos, term in enumerate(plan.terms):
        if plan.forms[pos][0] != term:
            return None  # not the plan this was written for
        key = (tuple(plan.forms[pos]), plan.exact[pos], plan.stem[pos], plan.k1, plan.cover_by)
        legs = postings.legs.get((key, bool(plan.blend)))
        if legs is None:
            legs = _legs(np, postings, plan, pos)
            size = sum(len(leg) for leg in legs)
            if postings.kept + size <= LEGS_KEPT:
                postings.legs[(key, bool(plan.blend))] = legs
                postings.kept += size
        at, se, ce, holding, stemmed, covered = legs
        es[at] += se
        ec[at] += ce
        matched[holding] += 1
        if plan.blend:
            ss[holding] += stemmed
            sc[holding] += covered
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


def _legs(np: Any, postings: Postings, plan: Plan, pos: int) -> tuple[Any, ...]:
    """What query term ``pos`` adds to each document holding it, as the SQL computes it:
    (documents holding it as asked, their saturated score and coverage; documents
    holding any of its forms, their stemmed score and coverage)."""
    lengths = postings.lengths

    def cover(weight: float, odds: float, at: Any) -> Any:
        if plan.cover_by == "count":
            return np.ones(len(at))
        if plan.cover_by == "idf":
            return np.full(len(at), weight)
        return weight * np.maximum(np.exp(odds * lengths[at]), LEAST_CHANCE)

    read = [postings.term(form) for form in plan.forms[pos]]
    at, x = read[0]  # the term as asked: a document holds it once
    ie, io = plan.exact[pos]
    exact = (at, np.where(x > 0, ie * x / (x + plan.k1), 0.0), cover(ie, io, at))
    if not plan.blend:
        return (*exact, at, x[:0], x[:0])
    if len(read) == 1:  # no other form: the documents and sums as asked
        holding, summed = at, x
    else:
        every = np.concatenate([where for where, _ in read])
        weights = np.concatenate([x for _, x in read])
        count = len(postings.docs)
        holding = np.flatnonzero(np.bincount(every, minlength=count))
        summed = np.bincount(every, weights=weights, minlength=count)[holding]
    istem, so = plan.stem[pos]
    return (*exact, holding, istem * summed / (summed + plan.k1), cover(istem, so, holding))


def _wholes(plan: Plan) -> tuple[float, float]:
    """What each ranking's coverage is a share of (as ``scoring`` divides)."""
    if plan.cover_by == "count":
        return float(len(plan.terms)), float(len(plan.terms))
    return sum(w for w, _ in plan.exact), sum(w for w, _ in plan.stem)
