"""The suite's constructions (``bench/suite.py``) through the product's own search in
every mode: lexical, semantic and hybrid beside plain BM25, in the same run.

``suite.py`` ranks its known-item queries with the search index alone (no store, no
model). Here each corpus × language is put into throwaway stores (the corpus as it is,
and the corpus with each ``description`` target's line taken out, as the suite does),
semantic recall is switched on with ``reindex --semantic`` as the README says, and every
query goes through ``lightsearch.search_document`` — what ``xbrain search QUERY --mode
M --limit 5`` prints — with the query's terms as its text. Plain BM25 is the suite's
(``retrieval.Baselines``: one field, k1 1.2, b 0.75, the 35 % coverage rule).

Then ``bench/everyday.py``'s constructions join the same table (corpus ``memories``:
everyday prompts, the same across languages, hand-written and public conversations,
chatter, and its ``model-on-text`` reference), so one run prints every construction ×
language × {lexical, semantic, hybrid, BM25} (``--no-everyday`` leaves them out).

Reported per corpus × language × construction × half × ranker: Recall@1, Recall@5,
MRR@5, the zero-result rate, the top-5 sign test against BM25, and for hybrid against
the better of lexical and semantic on that row. The verdict pools both halves and
follows issue 43 item 3 (``bench/verdicts.py``): hybrid is below its better leg only
when the sign test says p < 0.05 on Recall@5 or on MRR@5. Sizes are modest by default
(two cores are shared while it embeds every document): ``--man-pages``, ``--queries``.

Run: ``python bench/suite_modes.py [--corpus man] [--language zh] [--no-everyday]
[--provider packaged|hashing]`` (one corpus and language: ``--corpus man --language zh
--no-everyday``).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import suite
import verdicts
from retrieval import Baselines

from xbrain.search.tokenize import Tokenizer

MODES = ("lexical", "semantic", "hybrid")
HEADER = (*suite.HEADER, "top-5 vs better leg")


def stocked(root: Path, cache: Path, docs: list[dict[str, Any]], provider: str) -> Path:
    """A store holding ``docs`` with semantic recall on (public text: no secret check).

    Each doc is a page of its own: the catalog corpus names a message by a fragment of
    its program's page (``…/PROGRAM#NUMBER``), and the product's search collapses results
    that cite one page into the best of them (``sameUrl``), so its lexical answer held
    one result per program where BM25 ranks messages (Recall@5 equal to Recall@1)."""
    from xbrain.embedding import ProviderSpec
    from xbrain.secretscan import DETECTORS
    from xbrain.store import Store

    docs = [own_page(doc) for doc in docs]
    store = Store(root, cache_dir=cache, allow_secrets=DETECTORS)
    for first in range(0, len(docs), 1000):
        store.put(docs[first : first + 1000])
    store.reindex(semantic=ProviderSpec(provider))
    return root


def own_page(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` with a URL of its own page: a fragment becomes a query (``?n=NUMBER``)."""
    url = doc["source"]["url"]
    if "#" not in url:
        return doc
    page, fragment = url.split("#", 1)
    return {**doc, "source": {**doc["source"], "url": f"{page}?n={fragment}"}}


def searcher(store: Path, mode: str) -> suite.Ranker:
    """``xbrain search "TERMS" --mode MODE --limit N``, as resource ids."""
    from xbrain.lightsearch import search_document

    def rank(terms: list[str], limit: int) -> list[str]:
        found = search_document(store, " ".join(terms), limit=limit, mode=mode)
        return [r["resource"]["id"] for r in found["results"]]

    return rank


def _key(firsts: list[int]) -> tuple[int, float]:
    """Top-5 hits, then MRR@5: how the better leg is chosen."""
    return sum(f > 0 for f in firsts), sum(1 / f for f in firsts if f)


def better(results: dict[str, Any]) -> str:
    """Of lexical and semantic, the one with more top-5 hits (MRR@5 breaks a tie)."""
    return max(("lexical", "semantic"), key=lambda name: results[name][0][1:3])


def evaluate(
    corpus_name: str, language: str, count: int, root: Path, provider: str, man_pages: int
) -> tuple[list[tuple[str, ...]], list[str]]:
    """The rows of one corpus and language, and its verdict lines."""
    cache = root / "cache"
    tokenizer = Tokenizer(cache)
    rows: list[tuple[str, ...]] = []
    verdict: list[str] = []
    try:
        docs = suite.load(corpus_name, language, man_pages)
        ids = [d["id"] for d in docs]
        described, description = suite.description_queries(docs, tokenizer, count, corpus_name)
        siblings = suite.siblings_of(docs, corpus_name)
        where = root / f"{corpus_name}-{language}"
        plain = stocked(where / "plain", cache, docs, provider)
        taken = stocked(where / "described", cache, described, provider)
        made: dict[str, tuple[list[dict[str, Any]], Path, list[suite.Query]]] = {
            "words": (docs, plain, suite.words_queries(docs, tokenizer, count)),
            "description": (described, taken, description),
            "sibling": (docs, plain, suite.sibling_queries(docs, tokenizer, count, siblings)),
        }
        for construction, (corpus_docs, store, queries) in made.items():
            rankers: dict[str, Callable[[list[str], int], list[str]]] = {
                "bm25": Baselines(corpus_docs, tokenizer).bm25
            }
            rankers |= {mode: searcher(store, mode) for mode in MODES}
            pooled: dict[str, list[int]] = {name: [] for name in rankers}
            for half, part in suite.halves(queries):
                results = {
                    name: suite.measure([rank(terms, 5) for _, terms in part], ids, part)
                    for name, rank in rankers.items()
                }
                leg = better(results)
                for name, (figures, firsts) in results.items():
                    pooled[name] += firsts
                    versus = suite.paired(firsts, results["bm25"][1]) if name != "bm25" else ""
                    against = ""
                    if name == "hybrid":
                        against = f"{leg} {suite.paired(firsts, results[leg][1])}"
                    shown = tuple(f"{x:.3f}" for x in figures)
                    head = (corpus_name, language, construction, half, name)
                    rows.append((*head, str(len(ids)), str(len(part)), *shown, versus, against))
            leg = max(("lexical", "semantic"), key=lambda name: _key(pooled[name]))
            name = f"{corpus_name} {language} {construction}"
            verdict.append(verdicts.verdict(name, pooled["hybrid"], leg, pooled[leg]))
    finally:
        tokenizer.close()
    return rows, verdict


def everyday_rows(provider: str, root: Path) -> tuple[list[tuple[str, ...]], list[str]]:
    """``bench/everyday.py``'s constructions (everyday prompts, the same across languages,
    hand-written and public conversations, chatter) as rows of this table: corpus
    ``memories``, no document count column."""
    import everyday

    found, said = everyday.run(provider, root)
    rows = [
        (("memories", lang, construction, half, name, "", *rest))
        for construction, lang, half, name, *rest in found
    ]
    return rows, said


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--queries", type=int, default=100, help="per construction, language")
    parser.add_argument("--man-pages", type=int, default=300, help="English manual pages")
    parser.add_argument("--corpus", action="append", choices=suite.CORPORA, help="[all]")
    parser.add_argument("--language", action="append", choices=["en", "zh"], help="[both]")
    parser.add_argument("--provider", default="packaged", choices=["packaged", "hashing"])
    parser.add_argument(
        "--no-everyday", action="store_true", help="leave out bench/everyday.py's rows"
    )
    args = parser.parse_args()
    corpora = [c for c in suite.available() if c in (args.corpus or suite.CORPORA)]
    rows: list[tuple[str, ...]] = []
    verdict: list[str] = []
    with tempfile.TemporaryDirectory(prefix="xbrain-suite-modes-") as tmp:
        for corpus_name in corpora:
            for language in args.language or ("en", "zh"):
                found, said = evaluate(
                    corpus_name, language, args.queries, Path(tmp), args.provider, args.man_pages
                )
                rows += found
                verdict += said
        if not args.no_everyday:
            found, said = everyday_rows(args.provider, Path(tmp) / "everyday")
            rows += found
            verdict += said
    print(f"The suite in every mode (semantic provider: {args.provider})\n")
    print(suite.table(rows, HEADER))
    print(
        "\nHybrid against its better leg, both halves pooled (below only when the sign test "
        "says p < 0.05 on Recall@5 or MRR@5):"
    )
    print("\n".join(f"* {line}" for line in verdict))


if __name__ == "__main__":
    main()
