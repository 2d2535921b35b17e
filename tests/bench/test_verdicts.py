"""Issue 43's rule for hybrid against its better leg (bench/verdicts.py): below only when
the pooled sign test says p < 0.05 on Recall@5 or on MRR@5 — a ranker that keeps every
hit but pushes them down is below on MRR@5 alone."""

from __future__ import annotations

from tests.bench import bench_module

verdicts = bench_module("verdicts")


def test_the_sign_test_and_both_measures() -> None:
    assert verdicts.sign_test(0, 0) == 1.0
    assert verdicts.sign_test(6, 0) == 2 / 64
    assert verdicts.split([1, 0, 3], [2, 2, 0], "recall") == (1, 1, 1.0)
    assert verdicts.split([1, 0, 3], [2, 2, 0], "mrr")[:2] == (2, 1)


def test_a_leg_pushed_down_on_every_query_is_below_on_mrr_alone() -> None:
    leg = [1] * 12 + [0] * 4
    pushed = [3] * 12 + [0] * 4  # the same top-5 hits, each lower
    line = verdicts.verdict("man zh description", pushed, "lexical", leg)
    assert "R@5 +0/-0 p=1.00" in line and "MRR@5 +0/-12 p=0.00" in line
    assert line.endswith("→ BELOW")
    assert verdicts.verdict("x", leg, "lexical", leg).endswith("no significant difference)")
    assert verdicts.verdict("x", leg, "lexical", pushed).endswith("→ above")
