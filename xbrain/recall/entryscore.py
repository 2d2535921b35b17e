"""How an entry scores against a prompt's terms: its best query (the share of its terms,
weighted by rarity among the entries, the prompt holds — halved when only one of several
matched), a keyword the prompt holds, its name and description, and the prompt's own
terms found anywhere in it; plus its ``boost``."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

__all__ = [
    "ABOUT",
    "CONTENT",
    "KEYWORD",
    "STEMMED",
    "Idf",
    "one_term",
    "score_entry",
    "similarity",
]

KEYWORD = 0.6
ABOUT = 0.8
CONTENT = 0.7
# a word the prompt holds in another English form (``deploy`` for ``deploying``): weaker
# evidence than the word itself, as in search, where the stemmed ranking is blended in
STEMMED = 0.8


def similarity(
    terms: list[str], prompt: set[str], idf: Idf, roots: frozenset[str] = frozenset()
) -> tuple[float, list[str]]:
    """The rarity-weighted share of ``terms`` the prompt holds, and those terms; a term
    the prompt holds in another form only (its English stem is in ``roots``, the prompt
    terms' stems) counts ``STEMMED`` of its weight."""
    known = idf.known  # each weight computed so far
    total = exact = other = 0.0  # summed in the terms' order, as ``sum`` would
    held: list[str] = []
    count = 0
    for term in dict.fromkeys(terms):  # once each, in order
        count += 1
        w = known.get(term)
        if w is None:
            w = idf.weight(term)
        total += w
        if term in prompt:
            exact += w
            held.append(term)
        elif roots and _stem(term) in roots:
            other += w
            held.append(term)
    if not count:
        return 0.0, []
    score = (exact + STEMMED * other) / total
    if count > 1 and len(held) < 2:
        score *= 0.5  # one shared word out of several is weak evidence
    return score, held


def score_entry(
    entry: dict[str, Any],
    prompt: set[str],
    found: list[str],
    weight_total: float,
    idf: Idf,
    asked: str,
    roots: frozenset[str] = frozenset(),
    formed: tuple[str, ...] = (),
) -> tuple[float, dict[str, Any]]:
    """``entry``'s score for the prompt and why (``found``: the prompt's terms it holds,
    in prompt order; ``weight_total``: their weights' sum over the whole prompt;
    ``asked``: the prompt as written — a ``caseSensitive`` entry's keyword must be in it
    in the same case, its terms alone are lower-cased; ``roots``: the English stems of
    the prompt's terms; ``formed``: the prompt's terms the entry holds in another form
    only, which count ``STEMMED``)."""
    best: tuple[float, dict[str, Any]] = (0.0, {"via": None, "matched": []})
    if entry["kind"] == "stop-rule":
        roots = frozenset()  # it blocks the agent: by the words of its queries only
    for text, terms in entry["queries"]:
        score, matched = similarity(terms, prompt, idf, roots)
        if score > best[0]:
            best = (score, {"via": "query", "query": text, "matched": matched})
    for text, terms in entry["keywords"]:
        exact = not entry.get("caseSensitive") or text in asked
        if terms and all(t in prompt for t in terms) and exact and best[0] < KEYWORD:
            best = (KEYWORD, {"via": "keyword", "query": text, "matched": terms})
    if entry["kind"] == "stop-rule":  # it blocks the agent: only its own queries count
        return (best[0] + entry["boost"], best[1]) if best[0] > 0 else (0.0, best[1])
    score, matched = similarity(entry["about"], prompt, idf, roots)
    if score * ABOUT > best[0]:
        best = (score * ABOUT, {"via": "description", "matched": matched})
    if len(found) + len(formed) >= 3:  # the prompt's terms the entry holds anywhere (body
        # too), three at least
        held = sum(idf.weight(t) for t in found) + STEMMED * sum(idf.weight(t) for t in formed)
        share = held / weight_total
        if share * CONTENT > best[0]:
            best = (share * CONTENT, {"via": "content", "matched": [*found, *formed]})
    if best[0] <= 0:
        return 0.0, best[1]
    return best[0] + entry["boost"], best[1]


def _stem(term: str) -> str:
    """``term``'s English stem (itself when it is no English word), remembered: a prompt
    scores hundreds of entries, whose queries share most of their words."""
    known = _STEMS.get(term)
    if known is None:
        if len(_STEMS) > 100_000:  # a long-lived server: bounded
            _STEMS.clear()
        from ..search.stems import stem

        known = _STEMS[term] = stem(term)
    return known


_STEMS: dict[str, str] = {}


class Idf:
    """Inverse document frequency among the entries, computed per term on demand (a
    prompt touches few terms); a term no entry holds weighs as the rarest."""

    def __init__(self, df: Mapping[str, int], n: int) -> None:
        self.df = df
        self.n = n
        self.known: dict[str, float] = {}

    def weight(self, term: str) -> float:
        """``log(1 + (n + 1) / (df + 0.5))``."""
        known = self.known.get(term)
        if known is None:
            known = self.known[term] = math.log(1 + (self.n + 1) / (self.df.get(term, 0) + 0.5))
        return known


def one_term(entry: dict[str, Any]) -> bool:
    """Whether a single term can match the entry fully (a one-word query or keyword, or a
    name alone)."""
    texts = [terms for _, terms in entry["queries"] + entry["keywords"]] + [entry["about"]]
    return any(len(set(terms)) == 1 for terms in texts)
