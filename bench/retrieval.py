"""Building blocks of the retrieval suite (suite.py): known-item queries and baselines.

``make_queries`` simulates a known-item query: pick a document, draw 3 distinct terms
from its text with probability proportional to their frequency (as someone recalling
it would). ``Baselines`` ranks the same tokens two simpler ways:

* ``original`` — the first implementation: per field, add the field weight when the field
  contains the term (no term statistics);
* ``bm25`` — plain BM25 (k1 1.2, b 0.75) over all searchable fields as one text, with the
  35 % coverage rule (``gate=False``: without it);
* ``bm25_covered`` — a ranking considered for xbrain and not kept: that BM25 with field
  weights in the SPEC's order kept gentle (1.05 short fields, 1.025 summary, 1 text) and a
  gentle coordination (score × share of the query's idf matched ** 0.75), chosen on the
  dev half of the suite and its 2- and 5-term variants (2026-12-01).
"""

from __future__ import annotations

import math
import random
import statistics
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from xbrain.search.fields import field_texts
from xbrain.search.ranking import WEIGHTS, required_matches
from xbrain.search.tokenize import Tokenizer

TERMS_PER_QUERY = 3
COVERED_WEIGHTS = (1.05, 1.05, 1.05, 1.05, 1.025, 1.0)  # bm25_covered's field weights


def eligible(term: str) -> bool:
    if any("\u4e00" <= ch <= "\u9fff" for ch in term):
        return len(term) >= 2
    return len(term) >= 3 and not term.replace(".", "").isdigit()


def make_queries(
    docs: list[dict[str, Any]], tokenizer: Tokenizer, count: int, seed: int
) -> list[tuple[int, list[str]]]:
    rng = random.Random(seed)
    queries = []
    order = list(range(len(docs)))
    rng.shuffle(order)
    for target in order:
        tf = Counter(t for t in tokenizer.words(docs[target]["text"]) if eligible(t))
        if len(tf) < TERMS_PER_QUERY:
            continue
        terms: list[str] = []
        pool = dict(tf)
        while len(terms) < TERMS_PER_QUERY:
            term = rng.choices(list(pool), weights=list(pool.values()))[0]
            terms.append(term)
            del pool[term]
        queries.append((target, terms))
        if len(queries) == count:
            break
    return queries


class Baselines:
    """The original's weight sum and plain BM25, over the same tokens."""

    def __init__(self, docs: list[dict[str, Any]], tokenizer: Tokenizer) -> None:
        self.ids = [d["id"] for d in docs]
        self.weight: dict[str, dict[int, float]] = defaultdict(dict)
        self.tf: dict[str, dict[int, int]] = defaultdict(dict)
        self.weighted: dict[str, dict[int, float]] = defaultdict(dict)  # bm25_covered's tf
        self.length: list[int] = []
        for i, doc in enumerate(docs):
            counts = [tokenizer.counts(text) for text in field_texts(doc)]
            total: Counter[str] = Counter()
            for weight, field in zip(WEIGHTS, counts, strict=True):
                for term in field:
                    self.weight[term][i] = self.weight[term].get(i, 0) + weight
                total.update(field)
            for term, n in total.items():
                self.tf[term][i] = n
            for weight, field in zip(COVERED_WEIGHTS, counts, strict=True):
                for term, n in field.items():
                    self.weighted[term][i] = self.weighted[term].get(i, 0) + weight * n
            self.length.append(sum(total.values()))
        self.avg = statistics.fmean(self.length)

    def _top(
        self, scores: dict[int, float], matched: Counter[int], terms: list[str], limit: int
    ) -> list[str]:
        need = required_matches(len(terms))
        ranked = sorted(
            (i for i, s in scores.items() if s > 0 and matched[i] >= need),
            key=lambda i: (-round(scores[i], 9), self.ids[i]),
        )
        return [self.ids[i] for i in ranked[:limit]]

    def original(self, terms: list[str], limit: int) -> list[str]:
        scores: dict[int, float] = defaultdict(float)
        matched: Counter[int] = Counter()
        for term in terms:
            for i, w in self.weight.get(term, {}).items():
                scores[i] += w
                matched[i] += 1
        return self._top(scores, matched, terms, limit)

    def _bm25(
        self, terms: list[str], table: dict[str, dict[int, Any]], k1: float, b: float
    ) -> tuple[dict[int, float], Counter[int], dict[int, float]]:
        """BM25 over ``table`` (term → doc → frequency): scores, matched-term counts and
        the share of the query's idf each document matched."""
        n = len(self.ids)
        scores: dict[int, float] = defaultdict(float)
        matched: Counter[int] = Counter()
        mass: dict[int, float] = defaultdict(float)
        total = 0.0
        for term in terms:
            postings = table.get(term, {})
            idf = math.log(1 + (n - len(postings) + 0.5) / (len(postings) + 0.5))
            total += idf
            for i, tf in postings.items():
                norm = tf / (1 - b + b * self.length[i] / self.avg)
                scores[i] += idf * norm / (k1 + norm)
                matched[i] += 1
                mass[i] += idf
        return scores, matched, {i: m / (total or 1.0) for i, m in mass.items()}

    def bm25(
        self, terms: list[str], limit: int, k1: float = 1.2, b: float = 0.75, gate: bool = True
    ) -> list[str]:
        scores, matched, _ = self._bm25(terms, self.tf, k1, b)
        if not gate:  # plain BM25: every positive score, no coverage rule
            ranked = sorted((i for i, s in scores.items() if s > 0), key=lambda i: -scores[i])
            return [self.ids[i] for i in ranked[:limit]]
        return self._top(scores, matched, terms, limit)

    def bm25_covered(self, terms: list[str], limit: int, exponent: float = 0.75) -> list[str]:
        scores, matched, share = self._bm25(terms, self.weighted, 1.2, 0.75)
        covered = {i: s * share[i] ** exponent for i, s in scores.items()}
        return self._top(covered, matched, terms, limit)
