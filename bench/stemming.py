"""English stems, measured: the product's blend beside its alternatives.

Issue 14 suggested Snowball stemming (PyStemmer). The product now ranks with the exact
terms and their English stems blended (``xbrain.search.ranking``, ``STEM_BLEND``). This
script shows why that form and not another, on the suite's English rows (queries built
from unstemmed terms, as ``bench/suite.py`` builds them): plain BM25 over exact terms
and over stems; xbrain as shipped; ``xbrain-exact`` (``STEM_BLEND`` 0, the ranking before
stems); and ``xbrain+stem``, xbrain's BM25F over an index of stems only (query terms
stemmed the same way: ``[a-z]+`` words only; Chinese, numbers and ``foo.bar`` are left as
they are). Stems alone lose on queries made of the target's own words; blended, they are
a second, weaker signal.

Run ``python bench/stemming.py [--queries N]``.
"""

from __future__ import annotations

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

from xbrain.search import ranking
from xbrain.search.index import SearchIndex
from xbrain.search.stems import stem
from xbrain.search.tokenize import Tokenizer


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--queries", type=int, default=400, help="per construction and language")
    args = parser.parse_args()

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
            "xbrain-exact": _unblended(exact),
            "xbrain+stem": _stemmed_query(_unblended(stems), stem),
        }
        return out

    suite.rankers = rankers  # every construction's queries stay the unstemmed ones
    rows = []
    with tempfile.TemporaryDirectory(prefix="xbrain-stem-") as tmp:
        for corpus_name in suite.available():
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


def _unblended(index: SearchIndex) -> suite.Ranker:
    """The index's ranking with ``STEM_BLEND`` 0: its own terms only."""

    def ranked(terms: list[str], limit: int) -> list[str]:
        shipped, ranking.STEM_BLEND = ranking.STEM_BLEND, 0.0
        try:
            return [hit.rid for hit in index.search(terms, limit)]
        finally:
            ranking.STEM_BLEND = shipped

    return ranked


if __name__ == "__main__":
    main()
