"""Choosing the fusion on two corpora at once: manual pages and package descriptions.

``bench/fusion_tune.py`` chose the fusion on the dev halves of the manual-page sets
(``semantic_quality.py``); ``bench/fusion_packages.py`` then showed that on package
synopses the fused ranking is below the lexical leg alone. This one asks every
variant both questions: the legs of each dev query of both corpora are computed once
(``fusion_tune.legs_of``), every variant of the grid is fused offline
(``fusion_tune.fused``; the semantic floor stays the provider's, which was chosen for
keeping recall quiet on chit-chat), and variants are ranked by their worst margin over
the lexical leg (Recall@5 and MRR@5) across all dev rows of both corpora, then by the
mean margin. That rule alone drives the semantic weight towards nothing, so the variant
chosen is the one with the best dev mean among those whose worst dev margin is no lower
than the shipped variant's. Printed: the best variants and the shipped one with their
dev margins per row, the best variant of each semantic weight (the trade the weight
makes), the chosen one, then the test halves — looked at only after the choice — for
those and the shipped variant.

Run: ``python bench/fusion_joint.py [--legs FILE]`` (needs the semantic extra and apt's
Chinese descriptions, as ``fusion_packages.py``; ≈ 6 min, seconds with the legs kept in
FILE by an earlier run).
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import semantic_quality as sq
from fusion_packages import package_sets
from fusion_tune import Lexical, Semantic, fused, legs_of, recall_mrr, shipped

from xbrain.search.tokenize import Tokenizer
from xbrain.semantic import hybrid

Legs = list[tuple[Lexical, Semantic, set[str]]]  # per query: both legs, the right titles
Params = tuple[int, float, int, int, float]  # k, semantic weight, lexical depth, semantic
# depth, delta
GRID: list[Params] = list(
    itertools.product(
        (5, 10, 20, 60), (1.0, 0.8, 0.6, 0.4, 0.2), (10, 20), (3, 5, 10), (1.0, 0.1, 0.05)
    )
)
_OURS = shipped(floor=0.0)  # the floor is not varied here: it stays the provider's
SHIPPED: Params = (
    int(_OURS["k"]),
    _OURS["weight"],
    int(_OURS["depth_lex"]),
    int(_OURS["depth_sem"]),
    _OURS["delta"],
)


def margins(params: Params, rows: dict[str, Legs], floor: float) -> dict[str, tuple[float, float]]:
    """Per row: hybrid minus lexical, Recall@5 and MRR@5."""
    k, weight, depth_lex, depth_sem, delta = params
    out = {}
    for name, legs in rows.items():
        answers = [wanted for _, _, wanted in legs]
        lexical = recall_mrr([[t for t, _, _ in lex] for lex, _, _ in legs], answers)
        tops = [
            fused(lex, sem, k, weight, depth_lex, depth_sem, floor, delta, 0)
            for lex, sem, _ in legs
        ]
        hybrid_figures = recall_mrr(tops, answers)
        out[name] = (hybrid_figures[0] - lexical[0], hybrid_figures[1] - lexical[1])
    return out


def summary(found: dict[str, tuple[float, float]]) -> tuple[float, float]:
    """The worst margin and the mean margin over every row and both figures."""
    values = [v for pair in found.values() for v in pair]
    return min(values), sum(values) / len(values)


def line(params: Params, found: dict[str, tuple[float, float]]) -> str:
    worst, mean = summary(found)
    k, weight, lex, sem, delta = params
    cells = "  ".join(f"{name}:{r:+.2f}/{m:+.2f}" for name, (r, m) in found.items())
    return (
        f"k={k} w={weight} lex={lex} sem={sem} delta={delta}: worst {worst:+.3f} "
        f"mean {mean:+.3f} | {cells}"
    )


def computed_legs() -> tuple[dict[str, dict[str, Legs]], float]:
    """Both legs of every query of both corpora, per half and row; the semantic floor."""
    with tempfile.TemporaryDirectory(prefix="xbrain-fusion-joint-") as tmp:
        root, cache = Path(tmp), Path(tmp) / "cache"
        tokenizer = Tokenizer(cache)
        halves: dict[str, dict[str, Legs]] = {"dev": {}, "test": {}}

        rng = random.Random(11)  # the manual-page sets, as fusion_tune.py makes them
        corpora, en_all = sq.corpora_for(rng, 1500)
        stores = {
            lang: sq.stocked(root / "man" / lang, cache, docs, "packaged")[0]
            for lang, docs in corpora.items()
        }
        for (construction, lang), queries in sq.query_sets(
            corpora, en_all, rng, tokenizer, 60
        ).items():
            for half, part in (("dev", queries[0::2]), ("test", queries[1::2])):
                halves[half][f"man-{construction[:5]}-{lang}"] = [
                    (*legs_of(stores[lang], cache, tokenizer, text), {target})
                    for text, target in part
                ]
        packs = root / "package"
        for (construction, lang), queries in package_sets(packs, cache, random.Random(5)).items():
            for half, part in (("dev", queries[0::2]), ("test", queries[1::2])):
                halves[half][f"pkg-{construction[:5]}-{lang}"] = [
                    (*legs_of(packs / lang, cache, tokenizer, text), answers)
                    for text, answers in part
                ]
        tokenizer.close()
        return halves, round(hybrid.provider_for(stores["en"] / ".git").floor, 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--legs", type=Path, help="keep the computed legs in this file, or read them from it"
    )
    args = parser.parse_args()
    if args.legs is not None and args.legs.is_file():  # JSON: lists where tuples and
        # sets were, which the fusion and the scoring read the same way
        kept = json.loads(args.legs.read_text())
        halves, floor = kept["halves"], float(kept["floor"])
    else:
        halves, floor = computed_legs()
        if args.legs is not None:
            plain = {
                half: {
                    row: [[lex, sem, sorted(answers)] for lex, sem, answers in legs]
                    for row, legs in rows.items()
                }
                for half, rows in halves.items()
            }
            args.legs.write_text(json.dumps({"halves": plain, "floor": floor}))

    ranked = sorted(GRID, key=lambda p: summary(margins(p, halves["dev"], floor)), reverse=True)
    print(f"dev halves (semantic floor {floor}), hybrid minus lexical R@5/MRR@5 per row:\n")
    for params in ranked[:12]:
        print(line(params, margins(params, halves["dev"], floor)))
    print("shipped: " + line(SHIPPED, margins(SHIPPED, halves["dev"], floor)))
    # the trade the semantic weight makes: per weight, its best variant on dev
    frontier = [next(p for p in ranked if p[1] == w) for w in sorted({p[1] for p in GRID})]
    print("\nper semantic weight, its best variant on dev:\n")
    for params in frontier:
        print(line(params, margins(params, halves["dev"], floor)))
    # The worst margin alone drives the semantic weight to nothing (the package synopses
    # lose at every weight), giving up the paraphrases semantic recall is for. The rule:
    # no worse than the shipped variant on the worst dev row, then the best dev mean.
    floor_worst = summary(margins(SHIPPED, halves["dev"], floor))[0]
    chosen = max(
        (p for p in GRID if summary(margins(p, halves["dev"], floor))[0] >= floor_worst),
        key=lambda p: summary(margins(p, halves["dev"], floor))[::-1],
    )
    print("\nchosen (worst no lower than shipped, then the best mean), dev:\n")
    print(line(chosen, margins(chosen, halves["dev"], floor)))
    print("\ntest halves (not used to choose):\n")
    for params in [ranked[0], *frontier]:
        print(line(params, margins(params, halves["test"], floor)))
    print("chosen:  " + line(chosen, margins(chosen, halves["test"], floor)))
    print("shipped: " + line(SHIPPED, margins(SHIPPED, halves["test"], floor)))


if __name__ == "__main__":
    main()
