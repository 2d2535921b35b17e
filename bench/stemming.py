"""Would English stemming help? The suite's queries, ranked with and without it.

Issue 14 suggested Snowball stemming (PyStemmer). This measures it the only fair way: the
same queries as ``bench/suite.py`` (built from unstemmed terms), ranked by plain BM25
and xbrain's BM25F over an index of stemmed terms, the query's terms stemmed the same
way (``[a-z]+`` words only; Chinese, numbers and ``foo.bar`` are left as they are).
``xbrain+blendL`` adds the two: the exact index's BM25F score plus L times the stemmed
index's, over the union of both top 50s — stems as a weaker second signal. Nothing in
the product stems; this is the evidence for where it should start.

Run ``pip install PyStemmer`` then ``python bench/stemming.py [--queries N]``.
"""

from __future__ import annotations

import re
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import suite
from retrieval import Baselines

from xbrain.search.index import SearchIndex
from xbrain.search.tokenize import Tokenizer

_WORD = re.compile(r"[a-z]+\Z")
BLENDS = (0.25, 0.5, 1.0)


def stemmer() -> Callable[[str], str]:
    """A memoized Snowball English stem of one term (other terms unchanged)."""
    try:
        import Stemmer
    except ImportError:
        sys.exit("bench/stemming.py needs PyStemmer: pip install PyStemmer")
    english = Stemmer.Stemmer("english")
    memo: dict[str, str] = {}

    def stem(term: str) -> str:
        if term not in memo:
            memo[term] = english.stemWord(term) if _WORD.match(term) else term
        return memo[term]

    return stem


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--queries", type=int, default=400, help="per construction and language")
    args = parser.parse_args()
    stem = stemmer()

    class Stemming(Tokenizer):
        """The product's terms, stemmed (through its public methods: query_terms
        calls words)."""

        def words(self, text: str) -> list[str]:
            return [stem(term) for term in super().words(text)]

        def counts(self, text: str, bulk: bool = False) -> Counter[str]:
            found: Counter[str] = Counter()
            for term, n in super().counts(text, bulk).items():
                found[stem(term)] += n
            return found

    def rankers(docs: list[dict[str, Any]], tokenizer: Tokenizer) -> dict[str, suite.Ranker]:
        stemming = Stemming(tokenizer.cache_dir)
        exact, stems = _index(docs, tokenizer), _index(docs, stemming)
        out: dict[str, suite.Ranker] = {
            "bm25": Baselines(docs, tokenizer).bm25,
            "bm25+stem": _stemmed_query(Baselines(docs, stemming).bm25, stem),
            "xbrain": lambda terms, limit: [hit.rid for hit in exact.search(terms, limit)],
            "xbrain+stem": _stemmed_query(
                lambda terms, limit: [hit.rid for hit in stems.search(terms, limit)], stem
            ),
        }
        for weight in BLENDS:
            out[f"xbrain+blend{weight}"] = _blend(exact, stems, weight, stem)
        return out

    suite.rankers = rankers  # every construction's queries stay the unstemmed ones
    rows = []
    with tempfile.TemporaryDirectory(prefix="xbrain-stem-") as tmp:
        for corpus_name in ("man", "catalog"):
            rows += suite.evaluate(corpus_name, "en", args.queries, Path(tmp))
    print(suite.table(rows))


def _index(docs: list[dict[str, Any]], tokenizer: Tokenizer) -> SearchIndex:
    index = SearchIndex(":memory:", tokenizer)
    index.rebuild(iter(docs), "bench")
    return index


def _stemmed_query(rank: suite.Ranker, stem: Callable[[str], str]) -> suite.Ranker:
    def ranked(terms: list[str], limit: int) -> list[str]:
        return rank(list(dict.fromkeys(stem(term) for term in terms)), limit)

    return ranked


def _blend(
    exact: SearchIndex, stems: SearchIndex, weight: float, stem: Callable[[str], str]
) -> suite.Ranker:
    def ranked(terms: list[str], limit: int) -> list[str]:
        a = {hit.rid: hit.score for hit in exact.search(terms, 50)}
        stemmed = list(dict.fromkeys(stem(term) for term in terms))
        b = {hit.rid: hit.score for hit in stems.search(stemmed, 50)}
        return sorted(a.keys() | b.keys(), key=lambda r: (-a.get(r, 0) - weight * b.get(r, 0), r))[
            :limit
        ]

    return ranked


if __name__ == "__main__":
    main()
