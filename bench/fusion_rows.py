"""The suite's rows (``bench/suite_modes.py``) with each hybrid search's two legs kept, so
that fusion rules can be compared offline on the same queries.

Each corpus × language is put into throwaway stores as ``suite_modes.py`` does; every
query goes once through ``search_document(..., mode="hybrid")`` while the legs that
``hybrid.fused_search`` fuses are recorded (the lexical answer 10 deep with its scores,
and the semantic leg as gated). They are pickled (``--save``), and ``--load`` scores
fusion rules on them by the suite's verdict rule (``bench/verdicts.py``), per half and
both halves pooled. Parameters are chosen on the dev halves only.

Run: ``python bench/fusion_rows.py --corpus man --language zh --save /tmp/legs.pkl``,
then ``python bench/fusion_rows.py --load /tmp/legs.pkl [--load …]``.
"""

from __future__ import annotations

import argparse
import pickle
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import suite
import suite_modes

from xbrain.search.tokenize import Tokenizer
from xbrain.semantic import hybrid

Legs = dict[str, Any]  # lexical: [(id, score, matched, terms)], semantic: [(id, cos)], complete


def record(corpus_name: str, language: str, count: int, root: Path, provider: str) -> Any:
    """Per construction: (ids, queries, per query the legs)."""
    cache = root / "cache"
    tokenizer = Tokenizer(cache)
    seen: list[Legs] = []
    real_search, real_weights = hybrid.fused_search, hybrid.weights_for

    def fused_search(store_dir, cache_dir, query, limit, mode, lexical):  # type: ignore[no-untyped-def]
        seen.append(
            {
                "lexical": [
                    (r["citation"]["id"], r["score"], r["matched"]) for r in lexical["results"]
                ]
            }
        )
        return real_search(store_dir, cache_dir, query, limit, mode, lexical)

    def weights_for(complete: bool) -> dict[str, float]:
        seen[-1]["complete"] = complete
        return real_weights(complete)

    real_leg = hybrid.semantic_leg

    def semantic_leg(*args, **kwargs):  # type: ignore[no-untyped-def]
        out = real_leg(*args, **kwargs)
        seen[-1]["semantic"] = [(rid, score) for _, rid, score, _ in out]
        return out

    hybrid.fused_search, hybrid.weights_for, hybrid.semantic_leg = (
        fused_search,
        weights_for,
        semantic_leg,
    )  # type: ignore[assignment]
    made: dict[str, Any] = {}
    try:
        docs = suite.load(corpus_name, language, 300)
        ids = [d["id"] for d in docs]
        described, description = suite.description_queries(docs, tokenizer, count, corpus_name)
        siblings = suite.siblings_of(docs, corpus_name)
        where = root / f"{corpus_name}-{language}"
        plain = suite_modes.stocked(where / "plain", cache, docs, provider)
        taken = suite_modes.stocked(where / "described", cache, described, provider)
        plan = {
            "words": (plain, suite.words_queries(docs, tokenizer, count)),
            "description": (taken, description),
            "sibling": (plain, suite.sibling_queries(docs, tokenizer, count, siblings)),
        }
        for construction, (store, queries) in plan.items():
            rank = suite_modes.searcher(store, "hybrid")
            legs = []
            for _, terms in queries:
                seen.clear()
                shown = rank(terms, 5)
                got = seen[0] if seen else {"lexical": [], "semantic": [], "complete": False}
                got.setdefault("semantic", [])
                got.setdefault("complete", False)
                got["terms"] = terms
                got["shown"] = shown
                legs.append(got)
            made[construction] = (ids, queries, legs)
    finally:
        tokenizer.close()
        hybrid.fused_search, hybrid.weights_for, hybrid.semantic_leg = (
            real_search,
            real_weights,
            real_leg,
        )  # type: ignore[assignment]
    return made


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--corpus", choices=suite.CORPORA)
    parser.add_argument("--language", choices=["en", "zh"])
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--provider", default="packaged")
    parser.add_argument("--save")
    parser.add_argument("--load", action="append")
    args = parser.parse_args()
    if args.save:
        with tempfile.TemporaryDirectory(prefix="xbrain-fusion-rows-") as tmp:
            made = record(args.corpus, args.language, args.queries, Path(tmp), args.provider)
        with open(args.save, "wb") as out:
            pickle.dump({"name": f"{args.corpus} {args.language}", "rows": made}, out)
        return
    import fusion_rules

    data = []
    for path in args.load or []:
        with open(path, "rb") as given:
            data.append(pickle.load(given))
    fusion_rules.report(data)


if __name__ == "__main__":
    main()
