"""The SQL that scores a query's candidate documents (``ranking.py`` decides which).

It reads each candidate posting once; groups per document and query term, summing the
pseudo-frequency of the term's exact form and of all its forms; then per document,
each ranking's saturated sum and coverage, and the score, computed once; the resources
are read for the top hits only. Its cost follows the postings, not postings × terms (one
column per term, a ``CASE`` per term per posting, measured the same on short queries
and worse on whole prompts).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from itertools import pairwise
from typing import Any, NamedTuple

from .rows import FIELDS

__all__ = ["Plan", "holders", "layout", "query"]

# look each form up per candidate document when candidates x forms x this is under the
# postings the query's terms hold; else read the forms' postings whole
SEEK = 2
LEAST_CHANCE = 1e-12  # the least share of its idf a matched term counts: scores stay > 0


class Plan(NamedTuple):
    """What a query's ranking needs to know about its terms, computed once."""

    terms: list[str]
    forms: list[list[str]]  # per term, the indexed forms it matches (itself first)
    exact: list[tuple[float, float]]  # per term, (idf, log chance per token), exact form
    stem: list[tuple[float, float]]  # per term, the same for all its forms
    exact_df: list[int]
    stem_df: list[int]
    need: int
    blend: float  # 0 when no term has another form: the stemmed ranking is the exact one
    fields: list[tuple[float, float, float]]  # per field: weight, 1 - b, b / average length
    k1: float
    coordination: int
    cover_by: str  # "chance", "idf" or "count"
    form_df: list[list[int]]  # per term, the documents holding each of its forms


class _Sql:
    """A statement built in order: its text and its parameters side by side."""

    def __init__(self, text: str = "") -> None:
        self.text = text
        self.params: list[Any] = []

    def add(self, text: str, *params: Any) -> None:
        self.text += text
        self.params += params


def query(
    conn: sqlite3.Connection,
    plan: Plan,
    pruning: list[str],
    at_most: int,
    candidates: list[int] | None,
    limit: int,
    scored: Sequence[str] = (),
) -> list[tuple[Any, ...]]:
    """The top ``limit`` rows (rid, score, matched positions "2,0", resource JSON, the
    score as ranked: rounded to 9 places) among the documents holding one of the terms
    ``pruning`` (at most ``at_most`` of them; no ``pruning``: the ``candidates``, as
    many) and none of the terms ``scored`` (a first look's, whose documents it already
    ranked)."""
    # Per form: few candidates for its postings, look it up once per candidate document
    # ("p.doc IN"); else read its postings by term and test each document against the
    # set ("+p.doc", which keeps SQLite from using the index for it)
    seek = [[SEEK * at_most < df for df in dfs] for dfs in plan.form_df]
    sql = _Sql("WITH q(pos, term, exact, ie, ce, istem, cstem, seek) AS (VALUES ")
    sql.add(", ".join("(?, ?, ?, ?, ?, ?, ?, ?)" for f in plan.forms for _ in f) + ") ")
    for pos, term in enumerate(plan.terms):
        for form, by_doc in zip(plan.forms[pos], seek[pos], strict=True):
            sql.params += [pos, form, form == term, *plan.exact[pos], *plan.stem[pos], by_doc]
    power = " * h.{0}" * plan.coordination
    sql.add("SELECT r.rid, r.score, r.matched, (SELECT resource FROM docs WHERE doc = r.doc), ")
    sql.add("round(r.score, 9) ")
    sql.add(
        f"FROM (SELECT h.doc AS doc, h.rid AS rid, h.matched AS matched, (h.es{power.format('ec')}"
    )
    if plan.blend:
        sql.add(f" + ? * h.ss{power.format('sc')}", plan.blend)
    sql.add(") / ? AS score ", 1.0 + plan.blend)
    # per document: each ranking's sum of saturated term scores (es, ss) and coverage
    # (ec, sc), computed once; "LIMIT -1" keeps SQLite from folding this level into the
    # next, which would compute them again for the sort
    _by_groups(sql, plan)
    length = " + ".join(f"d.l{i}" for i in range(len(FIELDS)))
    sql.add(" FROM (")
    ways = sorted({by_doc for each in seek for by_doc in each}, reverse=True)
    for n, by_doc in enumerate(ways):
        sql.add(
            f"{' UNION ALL ' if n else ''}SELECT p.doc AS doc, d.rid AS rid, q.pos AS pos, "
            "q.exact AS exact, q.ie AS ie, q.ce AS ce, "
            f"q.istem AS istem, q.cstem AS cstem, {length} AS len, "
        )
        for i, values in enumerate(plan.fields):
            sql.add(f"{' + ' if i else ''}? * p.f{i} / (? + ? * d.l{i})", *values)
        sql.add(" AS x FROM q JOIN postings p ON p.term = q.term JOIN docs d ON d.doc = p.doc")
        sql.add(f" AND q.seek = {int(by_doc)}")
        _within(sql, pruning, scored, candidates, by_doc)
    sql.add(") s GROUP BY s.doc, s.pos) g GROUP BY g.doc HAVING COUNT(*) >= ? ", plan.need)
    sql.add("LIMIT -1) h ")
    sql.add("ORDER BY round(score, 9) DESC, h.rid LIMIT ?) r ", limit)
    sql.add("ORDER BY round(r.score, 9) DESC, r.rid")  # the resources of the top rows only
    # every matched term adds a positive score, so this drops nothing the limit let in
    return [row for row in conn.execute(sql.text, sql.params) if row[1] > 0]


def _within(
    sql: _Sql,
    pruning: list[str],
    scored: Sequence[str],
    candidates: list[int] | None,
    by_doc: bool,
) -> None:
    """Which postings of the forms read ``by_doc`` (or by term) are ranked."""
    if pruning:
        sql.add(
            f" AND {'' if by_doc else '+'}p.doc IN (SELECT doc FROM postings WHERE term IN "
            f"({_marks(pruning)}))",
            *pruning,
        )
    if scored:
        sql.add(
            f" AND p.doc NOT IN (SELECT doc FROM postings WHERE term IN ({_marks(scored)}))",
            *scored,
        )
    if candidates is not None:  # without ``pruning``, these are the documents to rank
        sql.add(f" AND {'' if by_doc or pruning else '+'}p.doc IN ({_marks(candidates)})")
        sql.params += candidates


def layout(plan: Plan, held: list[int]) -> list[int]:
    """Where each term of ``held`` (positions) has its field in a document's sum of
    :func:`holders`: 1 for the term as asked, 2 per other form; then the last offset,
    where the count of the terms a first look scored begins."""
    offsets = [0]
    for i in held:
        offsets.append(offsets[-1] + (2 * len(plan.forms[i]) - 1).bit_length())
    return offsets


def holders(
    conn: sqlite3.Connection,
    plan: Plan,
    held: list[int],
    scored: Sequence[str],
    least: float,
    candidates: list[int] | None,
    at_most: int,
    sums: list[int] | None = None,
) -> list[int] | None:
    """The documents holding one of the terms ``held`` (positions) and none of the terms
    ``scored`` that can still score ``least``: those whose best possible score, knowing
    which of the terms ``held`` they hold (as asked, or in another form) and counting
    every other term as held as asked with its whole idf, reaches it (as ``ranking``'s
    bound: each term adds less than its idf, coverage at most its share), and that can
    match enough terms — or, given ``sums``, those whose sum (:func:`layout`) is one of
    them. Only postings are read, not documents. None when more than ``at_most`` can
    (the caller ranks them all), or too many terms for the bits."""
    offsets = layout(plan, held)
    at = offsets[-1]
    if at + len(scored).bit_length() > 62:
        return None
    rows = [
        (form, (1 if form == plan.terms[i] else 2) << offset)
        for i, offset in zip(held, offsets, strict=False)
        for form in plan.forms[i]
    ] + [(term, 1 << at) for term in scored]
    sql = _Sql("WITH h(term, value) AS (VALUES ")
    sql.add(", ".join("(?, ?)" for _ in rows) + ") ")
    sql.params += [value for row in rows for value in row]
    inner = _Sql("FROM (SELECT p.doc AS doc, SUM(h.value) AS m FROM h JOIN postings p ")
    inner.add("ON p.term = h.term")
    if candidates is not None:
        inner.add(f" AND p.doc IN ({_marks(candidates)})", *candidates)
    inner.add(" GROUP BY p.doc)")
    if sums is not None:  # the integers the caller computed, written out
        sql.add(f"SELECT doc {inner.text} WHERE m IN ({', '.join(str(int(m)) for m in sums)}) ")
        sql.params += inner.params
    else:
        _bounded(sql, plan, held, scored, offsets, inner, least)
    sql.add("LIMIT ?", at_most + 1)
    found = [doc for (doc,) in conn.execute(sql.text, sql.params)]
    return found if len(found) <= at_most else None


def _bounded(
    sql: _Sql,
    plan: Plan,
    held: list[int],
    scored: Sequence[str],
    offsets: list[int],
    inner: _Sql,
    least: float,
) -> None:
    """The documents of ``inner`` whose sum says they can reach ``least`` (the bound
    computed per document)."""
    masks = [(1 << (b - a)) - 1 for a, b in pairwise(offsets)]
    exact = [f"((m >> {offset}) & 1)" for offset in offsets[:-1]]
    either = [f"(((m >> {a}) & {mask}) > 0)" for a, mask in zip(offsets, masks, strict=False)]
    others = [i for i in range(len(plan.terms)) if i not in held]
    as_asked = [i for i in others if plan.terms[i] not in scored]  # else held in a form
    sql.add("SELECT doc FROM (SELECT doc, ")
    sql.add(" + ".join(f"{e} * ?" for e in exact) + " + ? AS e, ")
    sql.params += [plan.exact[i][0] for i in held] + [sum(plan.exact[i][0] for i in as_asked)]
    sql.add(" + ".join(f"{e} * ?" for e in either) + " + ? AS s, ")
    sql.params += [plan.stem[i][0] for i in held] + [sum(plan.stem[i][0] for i in others)]
    sql.add(" + ".join(either) + " + ? AS n ", len(others))
    sql.add(inner.text, *inner.params)
    sql.add(f" WHERE m >> {offsets[-1]} = 0) WHERE n >= ? ", plan.need)
    whole = _wholes(plan)
    share = [f"(n / {float(len(plan.terms))!r})"] * 2
    if plan.cover_by != "count":
        share = [f"(e / {whole[0]!r})", f"(s / {whole[1]!r})"]
    legs = (f"e{f' * {share[0]}' * plan.coordination}", f"s{f' * {share[1]}' * plan.coordination}")
    # as ranking's bound: kept unless below ``least`` beyond rounding to 9 places
    sql.add(f"AND ({legs[0]} + ? * {legs[1]}) / ? * (1 + 1e-9) >= ? ", plan.blend)
    sql.params += [1.0 + plan.blend, least - 2e-9]


def _wholes(plan: Plan) -> tuple[float, float]:
    """What each ranking's coverage is a share of."""
    if plan.cover_by == "count":
        return float(len(plan.terms)), float(len(plan.terms))
    return sum(w for w, _ in plan.exact), sum(w for w, _ in plan.stem)


def _cover(plan: Plan, weight: str, odds: str, length: str) -> str:
    """What one matched term adds to a document's coverage (``weight``: its idf;
    ``odds``: its log chance per token; ``length``: the document's), by ``cover_by``."""
    if plan.cover_by == "count":
        return "1.0"
    if plan.cover_by == "idf":
        return weight
    # by idf, discounted by the chance a document this long holds it anyway
    return f"{weight} * max(exp({odds} * {length}), {LEAST_CHANCE})"


def _by_groups(sql: _Sql, plan: Plan) -> None:
    """Per document and term (se, ce, ss, cs), then per document."""
    whole = _wholes(plan)
    sql.add("FROM (SELECT g.doc AS doc, g.rid AS rid, ")
    sql.add("group_concat(g.pos) AS matched, SUM(g.se) AS es, SUM(g.ce) / ? AS ec", whole[0])
    if plan.blend:
        sql.add(", SUM(g.ss) AS ss, SUM(g.cs) / ? AS sc", whole[1])
    exact = "SUM(s.exact * s.x)"
    sql.add(
        f" FROM (SELECT s.doc AS doc, s.rid AS rid, s.pos AS pos, CASE WHEN {exact} > 0 THEN "
        f"s.ie * {exact} / ({exact} + ?) ELSE 0 END AS se, ",
        plan.k1,
    )
    sql.add(f"MAX(s.exact) * {_cover(plan, 's.ie', 's.ce', 's.len')} AS ce")
    if plan.blend:
        sql.add(", s.istem * SUM(s.x) / (SUM(s.x) + ?) AS ss, ", plan.k1)
        sql.add(f"{_cover(plan, 's.istem', 's.cstem', 's.len')} AS cs")


def _marks(values: Sequence[Any]) -> str:
    return ", ".join("?" * len(values))
