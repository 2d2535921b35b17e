"""Choosing how the two legs fuse, on the dev halves of bench/semantic_quality.py only.

Both legs are run once per dev query (lexical: the search index, 20 deep; semantic: the
packaged model, 20 deep above a 0.3 floor); fusion variants are then scored offline:
reciprocal rank fusion with k, a weight on the semantic leg, how deep each leg goes, the
semantic floor, a relative gate within the semantic leg (only hits within delta of its
best), and the power of the share of the query's terms a lexical hit matched that scales
its weight (0: none, as shipped; 1 and 2 were tried and not adopted: they won here and
lost on a second corpus, ``bench/fusion_packages.py``). The product's rule that a lexical best
holding every word as asked keeps the semantic leg after it applies throughout.
Printed: per variant, hybrid minus lexical Recall@5 and MRR@5 per construction (the
worst of them first), and the shipped variant — the test halves are never looked at.

Run: ``python bench/fusion_tune.py`` (needs the semantic extra).
"""

from __future__ import annotations

import itertools
import random
import sys
import tempfile
from collections.abc import Collection
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import semantic_quality as sq

from xbrain.retrieval.run import search_store
from xbrain.search.tokenize import Tokenizer
from xbrain.semantic import hybrid
from xbrain.semantic.vectors import catch_up, documents, nearest


def fused(lexical, semantic, k, weight, depth_lex, depth_sem, floor, delta, power):  # type: ignore[no-untyped-def]
    sem = [(t, s) for t, s in semantic[:depth_sem] if s >= floor]
    if sem:
        top = sem[0][1]
        sem = [(t, s) for t, s in sem if s >= top - delta]
    scores: dict[str, float] = {}
    first: dict[str, int] = {}
    for rank, (title, share, _) in enumerate(lexical[:depth_lex], 1):
        scores[title] = scores.get(title, 0) + share**power / (k + rank)
        first.setdefault(title, 0)
    if lexical and lexical[0][2]:  # the top holds every word as asked: semantic comes after
        weight = hybrid.weights_for(True)["semantic"]
    for rank, (title, _) in enumerate(sem, 1):
        scores[title] = scores.get(title, 0) + weight / (k + rank)
        first.setdefault(title, 1)
    return [t for t, _ in sorted(scores.items(), key=lambda x: (-x[1], first[x[0]], x[0]))][:5]


Lexical = list[tuple[str, float, bool]]  # (title, share of the query's terms, complete)
Semantic = list[tuple[str, float]]  # (title, cosine)


def shipped(floor: float) -> dict[str, float]:
    """The product's fusion as ``fused``'s arguments (``floor``: the provider's)."""
    return {
        "k": hybrid.RRF_K,
        "weight": hybrid.WEIGHTS["semantic"],
        "depth_lex": hybrid.LEXICAL_DEPTH,
        "depth_sem": hybrid.SEMANTIC_DEPTH,
        "floor": floor,
        "delta": hybrid.SEMANTIC_DELTA,
    }


def recall_mrr(tops: list[list[str]], answers: list[Collection[str]]) -> tuple[float, float]:
    """Recall@5 and MRR@5 of ``tops`` (titles, best first) against each query's answers."""
    firsts = [
        next((i for i, title in enumerate(top[:5], 1) if title in wanted), 0)
        for top, wanted in zip(tops, answers, strict=True)
    ]
    n = len(firsts) or 1
    return sum(1 for f in firsts if f) / n, sum(1 / f for f in firsts if f) / n


def legs_of(store: Path, cache: Path, tokenizer: Tokenizer, text: str) -> tuple[Lexical, Semantic]:
    """Both legs of ``text`` on ``store`` (semantic recall on): the lexical one 20 deep,
    the semantic one 20 deep above a 0.3 floor, for ``fused`` to combine."""
    control = store / ".git"
    provider = hybrid.provider_for(control)
    vectors = catch_up(control, provider)
    lexical = search_store(store, cache, text, limit=20, mode="lexical")
    terms = tokenizer.query_terms(text)
    lex = []
    for r in lexical["results"]:
        share = len(r["matched"]) / (len(terms) or 1)
        whole = share >= 1 and hybrid.holds_as_asked(store, r["citation"]["id"], terms)
        lex.append((r["resource"]["title"], share, whole))
    near = nearest(vectors, provider.embed([text])[0], ("resource",), 0.3, 20)
    docs = documents(control, "resource", [rid for _, rid, _, _ in near])
    return lex, [(docs[rid]["title"], s) for _, rid, s, _ in near if rid in docs]


def main() -> None:
    rng = random.Random(11)
    corpora, en_all = sq.corpora_for(rng, 1500)
    with tempfile.TemporaryDirectory() as tmp:
        root, cache = Path(tmp), Path(tmp) / "cache"
        tokenizer = Tokenizer(cache)
        stores = {
            language: sq.stocked(root / language, cache, docs, "packaged")[0]
            for language, docs in corpora.items()
        }
        sets = sq.query_sets(corpora, en_all, rng, tokenizer, 60)
        legs = {}
        for (construction, language), queries in sets.items():
            rows = []
            for text, target in queries[0::2]:  # dev only
                rows.append((*legs_of(stores[language], cache, tokenizer, text), target))
            legs[(construction, language)] = rows
        provider = hybrid.provider_for(stores["en"] / ".git")

        grid = itertools.product(
            (10, 60),
            (1.0, 0.8, 0.6, 0.4),
            (10, 20),
            (5, 10, 20),
            (0.35, 0.4, 0.45),
            (1.0, 0.1, 0.05),
            (0, 1, 2),
        )
        results = []
        for k, weight, dl, ds, floor, delta, power in grid:
            deltas = []
            for key, rows in legs.items():
                answers = [{t} for _, _, t in rows]
                lex_r, lex_m = recall_mrr([[t for t, _, _ in lex] for lex, _, _ in rows], answers)
                hyb_r, hyb_m = recall_mrr(
                    [
                        fused(lex, sem, k, weight, dl, ds, floor, delta, power)
                        for lex, sem, _ in rows
                    ],
                    answers,
                )
                deltas.append((key, hyb_r - lex_r, hyb_m - lex_m))
            worst = min(min(d[1], d[2]) for d in deltas)
            gain = sum(d[1] + d[2] for d in deltas) / len(deltas)
            results.append((worst, gain, (k, weight, dl, ds, floor, delta, power), deltas))
        results.sort(key=lambda r: (r[0], r[1]), reverse=True)
        # the product scales no lexical weight: power 0 (README: tried, not adopted)
        ours = (*shipped(round(provider.floor, 2)).values(), 0)
        shown = results[:12] + [r for r in results[12:] if r[2] == ours]
        for worst, gain, params, deltas in shown:
            if params == ours:
                print("shipped:", end=" ")
            cells = "  ".join(f"{c[:5]}-{lang}:{r:+.2f}/{m:+.2f}" for (c, lang), r, m in deltas)
            k, weight, lex, sem, floor, delta, power = params
            print(
                f"k={k} w={weight} lex={lex} sem={sem} floor={floor} delta={delta} "
                f"share^{power}: "
                f"worst {worst:+.3f} mean {gain:+.3f} | {cells}"
            )
        tokenizer.close()


if __name__ == "__main__":
    main()
