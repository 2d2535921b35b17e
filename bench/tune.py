"""Choose the ranking's parameters on the dev half of the suite, never on the test half.

For every combination in the grid, xbrain's Recall@5 and MRR@5 are compared with plain
BM25 (35 % coverage rule) in each dev row (corpus × language × construction). A ranking
must hold up everywhere, so configurations are ordered by their worst margin over BM25
across rows and metrics, then by their mean margin. The parameters are read by
the ranking at query time, so one index per corpus serves the whole grid.

Run ``python bench/tune.py [--queries N]``; it prints the best configurations.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import suite

from xbrain.search import ranking as search_ranking
from xbrain.search.tokenize import Tokenizer

# The grid: each name is a module constant of xbrain.search.ranking, each list the values to
# try. Field weights keep the SPEC's order (design/title/purpose/useWhen > summary > text).
GRID: dict[str, list[Any]] = {
    "WEIGHTS": [(1.25, 1.25, 1.25, 1.25, 1.1, 1.0), (1.1, 1.1, 1.1, 1.1, 1.05, 1.0)],
    "LENGTH_NORMALIZATION": [(0.5, 0.5, 0.5, 0.5, 0.75, 0.9)],
    "K1": [0.9, 1.2],
    "COORDINATION": [2, 3],
    # chance: matched idf discounted by the chance of holding the term anyway (shipped);
    # idf and count: the earlier coverages, kept to compare
    "COVER_BY": ["chance", "idf", "count"],
    # the stemmed ranking's weight beside the exact one (0: exact terms only)
    "STEM_BLEND": [0.0, 1.0],
}
# --grid stems: the shipped parameters with these blends of the stemmed ranking
STEM_BLENDS = [0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0]

Config = dict[str, Any]


def grid() -> list[Config]:
    return [dict(zip(GRID, values, strict=True)) for values in itertools.product(*GRID.values())]


def current() -> Config:
    """The parameters the product ships with."""
    return {name: getattr(search_ranking, name) for name in GRID}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--queries", type=int, default=400)
    parser.add_argument("--show", type=int, default=10)
    parser.add_argument("--grid", choices=("full", "current", "stems"), default="full")
    args = parser.parse_args()
    if args.grid == "stems":
        configs = [{**current(), "STEM_BLEND": blend} for blend in STEM_BLENDS]
    else:
        configs = grid() if args.grid == "full" else [current()]
    margins: list[list[float]] = [[] for _ in configs]
    labels: list[str] = []
    with tempfile.TemporaryDirectory(prefix="xbrain-tune-") as tmp:
        for corpus_name, language in itertools.product(suite.available(), ("en", "zh")):
            tokenizer = Tokenizer(Path(tmp))
            try:
                ids, constructions = suite.prepare(
                    corpus_name, language, args.queries, tokenizer, 1500
                )
                for construction, (ranked_by, queries) in constructions.items():
                    dev = suite.halves(queries)[0][1]
                    _, base_r5, base_mrr, _ = suite.score(ranked_by["bm25"], ids, dev)
                    row = f"{corpus_name} {language} {construction}"
                    labels += [f"{row} R@5", f"{row} MRR@5"]
                    for n, config in enumerate(configs):
                        for name, value in config.items():
                            setattr(search_ranking, name, value)
                        _, r5, mrr, _ = suite.score(ranked_by["xbrain"], ids, dev)
                        margins[n] += [r5 - base_r5, mrr - base_mrr]
                    print(f"{corpus_name} {language} {construction}: done", file=sys.stderr)
            finally:
                tokenizer.close()
    ranked = sorted(
        range(len(configs)), key=lambda n: (-min(margins[n]), -statistics.fmean(margins[n]))
    )
    print(f"| {' | '.join(GRID)} | worst margin | mean margin |")
    print("|---" * (len(GRID) + 2) + "|")
    for n in ranked[: args.show]:
        values = " | ".join(str(value) for value in configs[n].values())
        print(f"| {values} | {min(margins[n]):+.3f} | {statistics.fmean(margins[n]):+.3f} |")
    best = margins[ranked[0]]
    print("\nThe best configuration's margin over BM25 per dev row:")
    for label, margin in zip(labels, best, strict=True):
        print(f"  {label:<32} {margin:+.3f}")


if __name__ == "__main__":
    main()
