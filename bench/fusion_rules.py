"""Fusion rules scored offline on the legs ``bench/fusion_rows.py`` kept: plain weighted
reciprocal rank fusion (as shipped before the lexical lead; checked against what the
product showed when the legs were kept), the product's fusion as it stands, and the
lexical lead at other ratios and depths. Per construction: each rule against the better
leg on the dev half (where parameters are chosen), then both halves pooled by the
suite's verdict rule (``bench/verdicts.py``).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import suite
import verdicts

from xbrain.semantic import hybrid

Rule = Callable[[dict[str, Any]], list[str]]


def lexical_only(legs: dict[str, Any]) -> list[str]:
    return [rid for rid, _, _ in legs["lexical"][:5]]


def semantic_only(legs: dict[str, Any]) -> list[str]:
    return [rid for rid, _ in legs["semantic"][:5]]


def _fused(legs: dict[str, Any]) -> list[tuple[str, float, list[str]]]:
    lex = [rid for rid, _, _ in legs["lexical"][: hybrid.LEXICAL_DEPTH]]
    sem = [rid for rid, _ in legs["semantic"]]
    return hybrid.fuse({"lexical": lex, "semantic": sem}, hybrid.weights_for(legs["complete"]))


def plain(legs: dict[str, Any]) -> list[str]:
    """Weighted reciprocal rank fusion alone."""
    return [rid for rid, _, _ in _fused(legs)][:5]


def lead(ratio: float, depth: int) -> Rule:
    """The lexical lead at ``ratio`` among the first ``depth`` (the product's own:
    ``hybrid.LEAD_RATIO``, ``hybrid.LEAD_DEPTH``)."""

    def rule(legs: dict[str, Any]) -> list[str]:
        lexical = legs["lexical"][: hybrid.LEXICAL_DEPTH]
        saved = hybrid.LEAD_RATIO, hybrid.LEAD_DEPTH
        hybrid.LEAD_RATIO, hybrid.LEAD_DEPTH = ratio, depth
        try:
            first = hybrid.lexical_lead([score for _, score, _ in lexical])
        finally:
            hybrid.LEAD_RATIO, hybrid.LEAD_DEPTH = saved
        return [rid for rid, _, _ in hybrid.led(_fused(legs), [r for r, _, _ in lexical][:first])][
            :5
        ]

    return rule


RULES: dict[str, Rule] = {
    "plain": plain,
    "product": lead(hybrid.LEAD_RATIO, hybrid.LEAD_DEPTH),
    **{
        f"lead{depth}@{ratio}": lead(ratio, depth)
        for depth, ratio in itertools.product((1, 2, 3, 5), (1.05, 1.1, 1.2, 1.5))
    },
}


def report(data: list[dict[str, Any]]) -> None:
    """Per rule: the dev halves' MRR@5 and Recall@5 splits against the better leg, summed
    over every construction given, and each construction's pooled verdict."""
    for name, rule in RULES.items():
        dev = {"mrr": [0, 0], "recall": [0, 0]}
        said = []
        for each in data:
            for construction, (ids, queries, legs) in each["rows"].items():
                if name == "plain":
                    same = sum(plain(g) == g["shown"] for g in legs)
                    said.append(f"{each['name']} {construction}: reproduced {same}/{len(legs)}")
                firsts = {
                    key: suite.first_hits([ranker(g) for g in legs], ids, queries)
                    for key, ranker in (("lexical", lexical_only), ("semantic", semantic_only))
                }
                ours = suite.first_hits([rule(g) for g in legs], ids, queries)
                leg = max(
                    firsts,
                    key=lambda k: (
                        sum(f > 0 for f in firsts[k]),
                        sum(1 / f for f in firsts[k] if f),
                    ),
                )
                for measure, split in dev.items():
                    won, lost, _ = verdicts.split(ours[0::2], firsts[leg][0::2], measure)
                    split[0] += won
                    split[1] += lost
                said.append(
                    verdicts.verdict(f"{each['name']} {construction}", ours, leg, firsts[leg])
                )
        print(
            f"\n## {name}: dev halves vs the better leg: MRR@5 +{dev['mrr'][0]}/-{dev['mrr'][1]}, "
            f"R@5 +{dev['recall'][0]}/-{dev['recall'][1]}"
        )
        print("\n".join(f"* {line}" for line in said))
