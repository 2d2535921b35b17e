"""Ranking in small stores of related notes, where term statistics rest on a handful of
documents.

The suite (suite.py) ranks over thousands of documents. A new user's store holds a few
dozen, often on one subject. Here each query of the suite's rows is asked of its own
small store: the target, then its siblings (the other sections of its manual page, the
other messages of its program) up to the store size, then random documents. Reported per
row, over the dev or test half (100 queries each): Recall@1 and MRR@5 for plain BM25 (35 %
rule), xbrain as shipped, xbrain without the assumed documents of its chance discount
(``PRIOR_DOCUMENTS`` 1: the variant that chose the shipped 100), and xbrain with the
coverage it had before 2026-12-02 (by idf alone, field weights 1.25/1.1/1).

Run ``python bench/small_stores.py [--size 20] [--half test]``.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import suite
from retrieval import Baselines

from xbrain.search import ranking as search_ranking
from xbrain.search.index import SearchIndex
from xbrain.search.tokenize import Tokenizer

PER_ROW = 100
BEFORE = {"COVER_BY": "idf", "WEIGHTS": (1.25, 1.25, 1.25, 1.25, 1.1, 1.0)}
VARIANTS: dict[str, dict[str, Any]] = {
    "xbrain-no-prior": {"PRIOR_DOCUMENTS": 1},
    "xbrain-before": BEFORE,
}


@contextmanager
def ranking(settings: dict[str, Any]) -> Iterator[None]:
    """xbrain's ranking with some module constants replaced for the block."""
    kept = {name: getattr(search_ranking, name) for name in settings}
    for name, value in settings.items():
        setattr(search_ranking, name, value)
    try:
        yield
    finally:
        for name, value in kept.items():
            setattr(search_ranking, name, value)


def first_hit(top: list[str], wanted: str) -> int:
    return next((pos for pos, rid in enumerate(top, 1) if rid == wanted), 0)


def row(
    docs: list[dict[str, Any]],
    queries: list[suite.Query],
    siblings: list[list[int]],
    size: int,
    tokenizer: Tokenizer,
) -> dict[str, list[int]]:
    """Per ranker, the first-hit rank of each query in its own small store."""
    rng = random.Random(5)
    firsts: dict[str, list[int]] = {name: [] for name in ("bm25", "xbrain", *VARIANTS)}
    for answers, terms in queries[:PER_ROW]:
        target = min(answers)
        near = [i for i in siblings[target] if i not in answers][: size - 1]
        rest = [i for i in range(len(docs)) if i not in answers and i not in near]
        store = [docs[i] for i in [target, *near, *rng.sample(rest, size - 1 - len(near))]]
        wanted = docs[target]["id"]
        firsts["bm25"].append(first_hit(Baselines(store, tokenizer).bm25(terms, 5), wanted))
        with SearchIndex(":memory:", tokenizer) as index:
            index.rebuild(iter(store), "small")
            tops = {"xbrain": [hit.rid for hit in index.search(terms, 5)]}
            for name, settings in VARIANTS.items():
                with ranking(settings):
                    tops[name] = [hit.rid for hit in index.search(terms, 5)]
        for name, top in tops.items():
            firsts[name].append(first_hit(top, wanted))
    return firsts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=20, help="documents per store")
    parser.add_argument("--half", choices=("dev", "test"), default="test")
    args = parser.parse_args()
    means: dict[str, list[tuple[float, float]]] = {}
    print("| corpus | lang | queries | ranker | Recall@1 | MRR@5 |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="xbrain-small-") as tmp:
        tokenizer = Tokenizer(Path(tmp))
        try:
            for corpus_name in ("man", "catalog"):
                for language in ("en", "zh"):
                    docs = suite.load(corpus_name, language, 1500)
                    siblings = suite.siblings_of(docs, corpus_name)
                    described, description = suite.description_queries(
                        docs, tokenizer, 400, corpus_name
                    )
                    constructions = {
                        "words": (docs, suite.words_queries(docs, tokenizer, 400)),
                        "description": (described, description),
                        "sibling": (
                            docs,
                            suite.sibling_queries(docs, tokenizer, 400, siblings),
                        ),
                    }
                    for name, (texts, queries) in constructions.items():
                        half = dict(suite.halves(queries))[args.half]
                        result = row(texts, half, siblings, args.size, tokenizer)
                        for ranker, firsts in result.items():
                            r1 = sum(f == 1 for f in firsts) / len(firsts)
                            mrr = sum(1 / f for f in firsts if f) / len(firsts)
                            means.setdefault(ranker, []).append((r1, mrr))
                            print(
                                f"| {corpus_name} | {language} | {name} | {ranker} "
                                f"| {r1:.3f} | {mrr:.3f} |",
                                flush=True,
                            )
        finally:
            tokenizer.close()
    for ranker, values in means.items():
        r1 = statistics.fmean(v[0] for v in values)
        mrr = statistics.fmean(v[1] for v in values)
        print(f"| all | | mean | {ranker} | {r1:.3f} | {mrr:.3f} |")


if __name__ == "__main__":
    main()
