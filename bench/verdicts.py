"""Issue 43's rule for hybrid against its better leg: a row counts as below only when the
paired sign test over both halves pooled says p < 0.05 on Recall@5 or on MRR@5.

Each query's first hit is its rank (1–5) or 0 (none in the top 5). On Recall@5 a query
counts for a ranker when only it has a hit; on MRR@5 when its reciprocal rank is the
higher (a hit at 2 beats one at 4). Ties are left out, as a sign test does.
"""

from __future__ import annotations

import math

__all__ = ["ALPHA", "sign_test", "split", "verdict"]

ALPHA = 0.05


def sign_test(won: int, lost: int) -> float:
    """The two-sided sign-test p-value of ``won`` against ``lost``."""
    n = won + lost
    if not n:
        return 1.0
    tail = sum(math.comb(n, k) for k in range(min(won, lost) + 1)) / 2**n
    return min(1.0, 2 * tail)


def _rr(first: int) -> float:
    return 1 / first if first else 0.0


def split(ours: list[int], base: list[int], measure: str) -> tuple[int, int, float]:
    """Queries ``ours`` does better on / worse on by ``measure`` (``recall`` or ``mrr``),
    and the sign test's p."""
    pairs = list(zip(ours, base, strict=True))
    if measure == "recall":
        won = sum(bool(a) and not b for a, b in pairs)
        lost = sum(bool(b) and not a for a, b in pairs)
    else:
        won = sum(_rr(a) > _rr(b) for a, b in pairs)
        lost = sum(_rr(a) < _rr(b) for a, b in pairs)
    return won, lost, sign_test(won, lost)


def verdict(name: str, hybrid: list[int], leg_name: str, leg: list[int]) -> str:
    """One line: hybrid against its better leg on both measures, and the verdict."""
    parts = []
    below = above = False
    for measure, label in (("recall", "R@5"), ("mrr", "MRR@5")):
        won, lost, p = split(hybrid, leg, measure)
        parts.append(f"{label} +{won}/-{lost} p={p:.2f}")
        below |= p < ALPHA and lost > won
        above |= p < ALPHA and won > lost
    said = "BELOW" if below else ("above" if above else "at (no significant difference)")
    return f"{name}: hybrid vs {leg_name} (both halves) {', '.join(parts)} → {said}"
