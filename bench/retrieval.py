"""Retrieval quality: known-item search over real manual-page text, three rankers.

For each language a corpus of manual-page sections (see corpus.py) is indexed, and
known-item queries are simulated: pick a section, draw 3 distinct terms from its text
with probability proportional to their frequency (as someone recalling it would), and
ask each ranker for the top 5. Reported: Recall@1, Recall@5 and MRR@5 for

* ``original``  — the first implementation: per field, add the field weight when the
  field contains the term (no term statistics);
* ``bm25``      — plain BM25 (k1 1.2, b 0.75) over all searchable fields as one text;
* ``xbrain``    — the product: BM25F in SQLite via xbrain's own SearchIndex.

All three use xbrain's tokenizer and the same rule (>= 35% of terms, ties by id).
Queries are split in two halves: ``dev`` (used while choosing BM25F's parameters) and
``test`` (never used for choices); both are printed.
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
import corpus

from xbrain.kinds.model import normalize_resource
from xbrain.search.index import WEIGHTS, SearchIndex, field_texts, required_matches
from xbrain.search.tokenize import Tokenizer

TERMS_PER_QUERY = 3


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

    def bm25(
        self, terms: list[str], limit: int, k1: float = 1.2, b: float = 0.75, gate: bool = True
    ) -> list[str]:
        n = len(self.ids)
        scores: dict[int, float] = defaultdict(float)
        matched: Counter[int] = Counter()
        for term in terms:
            postings = self.tf.get(term, {})
            idf = math.log(1 + (n - len(postings) + 0.5) / (len(postings) + 0.5))
            for i, tf in postings.items():
                norm = tf / (1 - b + b * self.length[i] / self.avg)
                scores[i] += idf * norm / (k1 + norm)
                matched[i] += 1
        if not gate:  # plain BM25: every positive score, no coverage rule
            ranked = sorted((i for i, s in scores.items() if s > 0), key=lambda i: -scores[i])
            return [self.ids[i] for i in ranked[:limit]]
        return self._top(scores, matched, terms, limit)


def metrics(ranks: list[int | None]) -> tuple[float, float, float]:
    n = len(ranks)
    r1 = sum(1 for r in ranks if r == 1) / n
    r5 = sum(1 for r in ranks if r is not None and r <= 5) / n
    mrr = sum(1 / r for r in ranks if r is not None and r <= 5) / n
    return r1, r5, mrr


def evaluate(
    language: str, pages: int | None, queries: int, cache: Path, seed: int = 7
) -> list[tuple[str, ...]]:
    docs = [normalize_resource(r).resource for r in corpus.resources(language, pages)]
    tokenizer = Tokenizer(cache)
    baselines = Baselines(docs, tokenizer)
    index = SearchIndex(":memory:", tokenizer)
    index.rebuild(iter(docs), "bench")
    ids = [d["id"] for d in docs]
    rankers = {
        "original": baselines.original,
        "bm25": baselines.bm25,
        "xbrain": lambda terms, limit: [hit.rid for hit in index.search(terms, limit)],
    }
    sample = make_queries(docs, tokenizer, queries, seed)
    rows = []
    for half, part in (("dev", sample[0::2]), ("test", sample[1::2])):
        for name, rank in rankers.items():
            ranks: list[int | None] = []
            for target, terms in part:
                top = rank(terms, 5)
                ranks.append(top.index(ids[target]) + 1 if ids[target] in top else None)
            r1, r5, mrr = metrics(ranks)
            rows.append(
                (
                    language,
                    half,
                    name,
                    str(len(docs)),
                    str(len(part)),
                    f"{r1:.3f}",
                    f"{r5:.3f}",
                    f"{mrr:.3f}",
                )
            )
    index.close()
    tokenizer.close()
    return rows


def main() -> None:
    import argparse
    import tempfile

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--en-pages", type=int, default=1500)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="xbrain-retrieval-") as tmp:
        rows = evaluate("en", args.en_pages, args.queries, Path(tmp))
        rows += evaluate("zh", None, args.queries, Path(tmp))
    header = ("lang", "queries", "ranker", "docs", "n", "Recall@1", "Recall@5", "MRR@5")
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" for _ in header) + "|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
