"""The ranking: BM25F over the index's postings, with coverage, and English stems blended in.

Each field's term frequency is length-normalized, weighted and summed into one
pseudo-frequency per term, then saturated with ``K1`` and multiplied by the term's IDF;
the sum is scaled by the squared coverage — the share of the query's IDF the document
matched, each term discounted by the chance that a document of its length holds that
term anyway. That is computed twice: once over the query's exact terms, and once over
their English stems (a query term then matches every indexed form that shares its stem,
as one term: ``stems.py``); the score is their blend, ``(exact + STEM_BLEND × stemmed) /
(1 + STEM_BLEND)``. A query whose terms have no other forms — any Chinese query — scores
exactly as the exact ranking alone. The 35 % rule counts the terms matched in either
form. The SQL (``scoring.py``) does the arithmetic so only the top hits reach Python.

The parameters are module constants read at query time, so ``bench/tune.py`` can try a
grid of them on one index.
"""

from __future__ import annotations

import itertools
import math
import sqlite3
from contextvars import ContextVar
from typing import Any

from . import inmemory, kept
from .scoring import Plan, holders, layout, query
from .stems import variants

__all__ = ["COVERAGE", "documents", "required_matches", "scored", "words_as_typed"]

# The original's order (design labels, title, purpose, useWhen most; summary less; text
# least), but gentle. Chosen on the dev half of bench/suite.py (three corpora, two
# languages, three ways of asking) by bench/tune.py, which ranks a grid by the worst
# margin over plain BM25 across all dev rows: steeper weights (4/2/1, the old choice made
# on one kind of query) lost to BM25 on queries worded like a description. Short fields
# barely length-normalized, long text strongly; a low k1 (0.9), so one frequent term
# saturates early; and a coverage factor so a document holding the query's terms beats a
# sibling whose short purpose line holds one of them. Coverage counts each matched term
# by its idf, so a target holding the rare query words and missing a common one keeps
# most of its score (counting terms alone, a sibling holding only the common ones won),
# times the chance (1 - p) ** (L / average length) that a document L tokens long would
# not hold a term a share p of documents hold: common words a long section matches by
# chance add little coverage.
WEIGHTS = (1.1, 1.1, 1.1, 1.1, 1.05, 1.0)
LENGTH_NORMALIZATION = (0.5, 0.5, 0.5, 0.5, 0.75, 0.9)
K1 = 0.9
COORDINATION = 2  # score x coverage ** COORDINATION
COVER_BY = "chance"  # or "idf" (no discount) or "count" (matched terms), kept to compare
# documents assumed to hold no term beside the real ones when p is estimated, so a small
# store's shares are not overread (bench/small_stores.py: stores of 20 and 50)
PRIOR_DOCUMENTS = 100
# the stemmed ranking's weight beside the exact one (0: no stems). Chosen on the dev half
# by bench/tune.py --grid stems: 0.5, 1 and 2 tie on the worst margin; 1 has the best mean
STEM_BLEND = 1.0
COVERAGE = 0.35
# Whether a query's words also match their other forms. Recall (the prompt router) turns
# it off with ``words_as_typed`` for a long prompt only (``candidates.FORMS_UP_TO``): its
# many words' forms would cost more than they find. A search matches the forms always.
_WORD_FORMS: ContextVar[bool] = ContextVar("word_forms", default=True)
# the first look at a query's best documents (for MaxScore) reads about this many postings
FIRST = 500
# The second look (on a big store, its words' documents are thousands) first reads which
# of its words each document holds, from the postings alone, and ranks only those that
# can still reach the first look's results: when its words hold more postings than
# HOLDERS_FROM and are at most HELD (more: their bound is loose), by name when they are
# at most HOLDERS documents (SQLite before 3.32 takes 999 parameters in a statement).
# For at most SUMMED words, which sums of a document's postings can reach the results
# are listed (at most SUMS of them), else the statement bounds each document itself.
HOLDERS_FROM = 4_000
HELD = 8
SUMMED = 4
SUMS = 2_000
HOLDERS = 5_000 if sqlite3.sqlite_version_info >= (3, 32) else 500


class words_as_typed:
    """Within the block, rank by the words as typed only (no other forms)."""

    def __enter__(self) -> None:
        self.token = _WORD_FORMS.set(False)

    def __exit__(self, *exc: object) -> None:
        _WORD_FORMS.reset(self.token)


def chance(frequency: int, documents: int, average_length: float) -> float:
    """The log of (1 - p) per token of a document (p: the share of documents holding the
    term, with ``PRIOR_DOCUMENTS``): a matched term counts by ``exp(this × document
    length)``, the chance an average-rate document that long would not hold it."""
    return math.log(1 - frequency / (documents + PRIOR_DOCUMENTS)) / (average_length or 1.0)


def required_matches(count: int) -> int:
    """The fewest matched terms with ``matched / count >= 0.35`` (as the original computes)."""
    return next(m for m in range(count + 1) if m / count >= COVERAGE)


def idf(frequency: int, documents: int) -> float:
    """BM25's idf of a term ``frequency`` of ``documents`` hold."""
    return math.log(1 + (documents - frequency + 0.5) / (frequency + 0.5))


def scored(
    conn: sqlite3.Connection,
    terms: list[str],
    limit: int,
    candidates: list[int] | None,
    total_docs: int,
) -> list[tuple[Any, ...]]:
    """The top ``limit`` rows (rid, score, matched positions "2,0", resource JSON):
    positive score, >= 35 % of the terms matched (exactly or by stem), ties by id.

    Only documents that can qualify are scored. By the coverage rule: a document matching
    none of the (len - need + 1) rarest terms matches at most need - 1 of them. And by
    score (MaxScore): the top hits among a few documents (those holding the rarest words
    as asked) give a score the results must reach; a document holding only terms whose
    best possible scores together stay under it cannot, so only documents holding one of
    the others are scored — whichever of the two sets is smaller. On a big store those
    are thousands: which of those words each holds, read from the postings alone,
    bounds its score the same way, and only those that can still reach it are scored.

    A server holding the index's postings in memory (``inmemory.py``: a team layer's)
    names the few documents that can rank; the same SQL ranks exactly those.
    """
    plan = _plan(conn, terms, total_docs)
    picked = inmemory.pick(conn, plan, limit, candidates, (WEIGHTS, LENGTH_NORMALIZATION))
    if picked is not None:
        found = query(conn, plan, [], len(picked), picked, limit) if picked else []
        return [row[:4] for row in found]
    order = sorted(range(len(terms)), key=lambda i: plan.stem_df[i])
    rarest = order[: len(terms) - plan.need + 1]
    pruning = [form for i in rarest for form in plan.forms[i]]
    if len(rarest) == 1:
        found = query(conn, plan, pruning, plan.stem_df[rarest[0]], candidates, limit)
        return [row[:4] for row in found]
    # a first, cheap look: the documents holding the rarest words as asked
    few: list[str] = []
    at_most = 0
    for i in sorted(range(len(terms)), key=lambda i: plan.exact_df[i]):
        if few and at_most + plan.exact_df[i] > FIRST:
            break
        few.append(terms[i])
        at_most += plan.exact_df[i]
    first = query(conn, plan, few, at_most, candidates, limit)
    if len(first) == limit:
        needed = _needed(plan, first[-1][1])
        if sum(plan.stem_df[i] for i in needed) < sum(plan.stem_df[i] for i in rarest):
            rarest = needed
            pruning = [form for i in rarest for form in plan.forms[i]]
    if set(pruning) <= set(few):  # the first look already read every document that can rank
        return [row[:4] for row in first]
    # the others: every document the first look ranked holds one of ``pruning`` (its
    # results reach the bound, or the coverage rule), so they are not ranked twice
    total = sum(plan.stem_df[i] for i in rarest)
    within = None
    if len(first) == limit and _worth(plan, rarest, few, first[-1][1], total):
        least = first[-1][1]  # of those, only the ones whose terms can reach its results
        sums = _sums(plan, rarest, few, least)
        within = holders(conn, plan, rarest, few, least, candidates, HOLDERS, sums)
    if within is None:
        rest = query(conn, plan, pruning, total, candidates, limit, scored=few)
    else:
        # none of them holds a word of ``few`` as asked (``holders`` left those out)
        rest = query(conn, plan, [], len(within), within, limit) if within else []
    merged = sorted(first + rest, key=lambda row: (-row[4], row[0]))  # as the SQL orders
    return [row[:4] for row in merged[:limit]]


def documents(conn: sqlite3.Connection) -> int:
    """How many documents the index ``conn`` reads holds (a kept connection remembers it
    for its snapshot, as the terms' frequencies)."""
    known = _known(conn)
    found: int | None = known.get("documents")
    if found is None:
        found = known["documents"] = int(conn.execute("SELECT COUNT(*) FROM docs").fetchone()[0])
    return found


def _plan(conn: sqlite3.Connection, terms: list[str], total_docs: int) -> Plan:
    known = _known(conn)
    totals = known.get("totals")
    if totals is None:
        totals = dict(conn.execute("SELECT field, length FROM totals").fetchall())
        known["totals"] = totals
    with_forms = bool(STEM_BLEND and _WORD_FORMS.get())
    held = [_term(conn, known, term, with_forms) for term in terms]
    forms = [list(f) for f, _, _, _ in held]
    exact_df = [df for _, df, _, _ in held]
    stem_df = [df for _, _, df, _ in held]
    average_length = sum(totals.values()) / total_docs

    def stats(df: int) -> tuple[float, float]:
        return idf(df, total_docs), chance(df, total_docs, average_length)

    fields = [
        (weight, 1.0 - b, b / (totals.get(i, 0) / total_docs or 1.0))
        for i, (weight, b) in enumerate(zip(WEIGHTS, LENGTH_NORMALIZATION, strict=True))
    ]
    return Plan(
        terms,
        forms,
        [stats(df) for df in exact_df],
        [stats(df) for df in stem_df],
        exact_df,
        stem_df,
        required_matches(len(terms)),
        STEM_BLEND if any(len(f) > 1 for f in forms) else 0.0,
        fields,
        K1,
        COORDINATION,
        COVER_BY,
        [list(dfs) for _, _, _, dfs in held],
    )


# what a long-lived server remembers of one index's snapshot: its totals and each term's
# forms and frequencies (a prompt's common words recur in every prompt)
KNOWN_TERMS = 20_000


def _known(conn: sqlite3.Connection) -> dict[Any, Any]:
    """What is known of the snapshot ``conn`` reads now: a kept connection's memo while
    no commit changed the index (``PRAGMA data_version``, read inside the request's read
    transaction, changes with every other connection's commit), else a new dict."""
    memo = kept.memo(conn)
    if memo is None:
        return {}
    version = conn.execute("PRAGMA data_version").fetchone()[0]
    if memo.get("version") != version or len(memo) > KNOWN_TERMS:
        memo.clear()
        memo["version"] = version
    return memo


def _term(
    conn: sqlite3.Connection, known: dict[Any, Any], term: str, with_forms: bool
) -> tuple[tuple[str, ...], int, int, tuple[int, ...]]:
    """``term``'s indexed forms (itself first; itself alone without ``with_forms``), the
    documents holding it, those holding any of its forms, and those holding each form."""
    key = (term, with_forms)
    found: tuple[tuple[str, ...], int, int, tuple[int, ...]] | None = known.get(key)
    if found is None:
        forms = variants(conn, term) if with_forms else [term]
        if len(forms) == 1:
            df = _frequency(conn, forms)
            found = known[key] = ((term,), df, df, (df,))
        else:
            each = _each(conn, forms)
            dfs = tuple(each.get(form, 0) for form in forms)
            found = known[key] = (tuple(forms), dfs[0], _frequency(conn, forms), dfs)
    return found


def _bound(plan: Plan, held: list[int], exact: list[int] | None = None) -> float:
    """The highest score a document matching only the terms ``held`` can have (as asked:
    those of ``exact``, all of them by default): each term adds less than its idf, and
    coverage is at most its share of the query's."""

    def leg(stats: list[tuple[float, float]], terms: list[int]) -> float:
        total = sum(stats[i][0] for i in terms)
        if plan.cover_by == "count":
            share = len(held) / len(plan.terms)
        else:
            share = total / sum(weight for weight, _ in stats)
        return float(total * share**plan.coordination)

    as_asked = held if exact is None else exact
    return (leg(plan.exact, as_asked) + plan.blend * leg(plan.stem, held)) / (1.0 + plan.blend)


def _needed(plan: Plan, least: float) -> list[int]:
    """Terms of which a result must hold one to reach the score ``least``: the rarest
    first (the fewest documents to score), until the rest cannot reach it even with
    rounding to 9 places."""
    rest = sorted(range(len(plan.terms)), key=lambda i: -plan.stem_df[i])
    needed: list[int] = []
    while rest and _bound(plan, rest) * (1 + 1e-9) >= least - 2e-9:
        needed.append(rest.pop())
    return needed


def _worth(plan: Plan, held: list[int], few: list[str], least: float, total: int) -> bool:
    """Whether reading which of the terms ``held`` each of their documents holds can
    leave few of them to rank (none holding a term of ``few`` as asked): not for few
    postings (reading them costs more than it saves), nor many terms (their bound is
    loose), nor when a document holding one of them alone (and every other term) can
    reach ``least`` for most of them."""
    if total <= HOLDERS_FROM or len(held) > HELD:
        return False
    others = [i for i in range(len(plan.terms)) if i not in held]
    as_asked = [i for i in range(len(plan.terms)) if plan.terms[i] not in few]
    alone = sum(
        plan.stem_df[i]
        for i in held
        if len(others) + 1 >= plan.need
        and _bound(plan, [i, *others], [k for k in (i, *others) if k in as_asked]) * (1 + 1e-9)
        >= least - 2e-9
    )
    return alone * 2 < total


def _sums(plan: Plan, held: list[int], few: list[str], least: float) -> list[int] | None:
    """Every sum :func:`scoring.holders` reads for a document (:func:`scoring.layout`)
    whose terms can reach ``least`` — which of the terms ``held`` it holds as asked or
    only in another form deciding, every other term counted as held (as asked unless in
    ``few``: the first look ranked those) — or None for more than ``SUMS`` of them or
    more terms than ``SUMMED`` (the statement then bounds each document itself)."""
    if len(held) > SUMMED:
        return None
    offsets = layout(plan, held)
    others = [i for i in range(len(plan.terms)) if i not in held]
    as_asked = [i for i in others if plan.terms[i] not in few]
    sums: list[int] = []
    # per term: 0 not held, 1 only in another form, 2 as asked (with other forms or not)
    for states in itertools.product((0, 1, 2), repeat=len(held)):
        either = [i for i, state in zip(held, states, strict=True) if state] + others
        exact = [i for i, state in zip(held, states, strict=True) if state == 2] + as_asked
        if any(plan.terms[i] in few for i, state in zip(held, states, strict=True) if state == 2):
            continue  # no document left holds it as asked
        if len(either) < plan.need or _bound(plan, either, exact) * (1 + 1e-9) < least - 2e-9:
            continue
        values = [
            [0]
            if not state
            else [
                (state - 1 + 2 * others_held) << offset
                for others_held in range(state == 1, len(plan.forms[i]))
            ]
            for i, state, offset in zip(held, states, offsets, strict=False)
        ]
        sums += [sum(chosen) for chosen in itertools.product(*values)]
        if len(sums) > SUMS:
            return None
    return sums


def _each(conn: sqlite3.Connection, forms: list[str]) -> dict[str, int]:
    """How many documents hold each of ``forms`` (a form none holds is missing)."""
    marks = ", ".join("?" * len(forms))
    sql = f"SELECT term, COUNT(*) FROM postings WHERE term IN ({marks}) GROUP BY term"
    return dict(conn.execute(sql, forms).fetchall())


def _frequency(conn: sqlite3.Connection, forms: list[str]) -> int:
    """How many documents hold any of ``forms``."""
    if len(forms) == 1:
        sql = "SELECT COUNT(*) FROM postings WHERE term = ?"
    else:
        marks = ", ".join("?" * len(forms))
        sql = f"SELECT COUNT(DISTINCT doc) FROM postings WHERE term IN ({marks})"
    return int(conn.execute(sql, forms).fetchone()[0])
