"""Hybrid search's lexical lead (SPEC §14): a lexical best that stands clear of the
lexical results after it keeps its place at the top, where plain reciprocal rank fusion
let a record both legs found further down overtake it (the suite's man zh description
row: hybrid below lexical on MRR@5, +2/-11)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import Result, make

pytest.importorskip("numpy", reason="the semantic extra is not installed")

Run = Callable[..., Result]


def test_a_clear_lexical_best_stays_first_when_the_legs_agree_below_it(
    xb: Run, store_dir: Path, json_file: Callable[[Any], str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from xbrain.kinds.model import resource_id
    from xbrain.semantic import hybrid

    best = make("best", title="rsync mirror", text="rsync mirror rsync mirror rsync")
    notes = [
        make(
            f"note{n}",
            title=f"Note {n}",
            text=f"rsync and a mirror, once each, among many other words of part {n}",
        )
        for n in range(4)
    ]
    for item in (best, *notes):
        assert xb("put", json_file(item)).code == 0
    assert xb("reindex", "--semantic", "--provider", "hashing").code == 0
    query = "rsync mirror snapshot"  # no note holds "snapshot": the lexical leg is not complete
    lexical = xb("search", query, "--mode", "lexical", "--limit", "10").json["results"]
    ids = [r["citation"]["id"] for r in lexical]
    assert ids[0] == resource_id("web", "best") and len(ids) == 5
    assert lexical[0]["score"] >= 1.1 * lexical[1]["score"]  # a clear step (LEAD_RATIO)
    below = ids[3]  # the semantic leg's first: found by both legs, 4th lexically
    plain = hybrid.fuse({"lexical": ids, "semantic": [below]}, hybrid.WEIGHTS)
    assert plain[0][0] == below  # what plain fusion would show first

    def leg(*_: Any, **__: Any) -> list[tuple[str, str, float, int]]:
        return [("resource", below, 0.9, 0)]

    monkeypatch.setattr(hybrid, "semantic_leg", leg)
    found = xb("search", query, "--mode", "hybrid").json["results"]
    assert [r["citation"]["id"] for r in found][:2] == [ids[0], below]
    assert found[0]["foundBy"] == ["lexical"] and found[1]["foundBy"] == ["lexical", "semantic"]


@given(st.lists(st.floats(min_value=0.01, max_value=100), max_size=8))
def test_the_lead_ends_at_the_deepest_clear_step_among_the_first_three(
    given_scores: list[float],
) -> None:
    from xbrain.semantic.hybrid import LEAD_DEPTH, LEAD_RATIO, lexical_lead

    scores = sorted(given_scores, reverse=True)
    lead = lexical_lead(scores)
    after = [*scores[1:], 0.0]
    steps = [
        rank
        for rank in range(1, len(scores) + 1)
        if scores[rank - 1] >= LEAD_RATIO * after[rank - 1]
    ]
    assert lead == max((rank for rank in steps if rank <= LEAD_DEPTH), default=0)
    assert 0 <= lead <= min(LEAD_DEPTH, len(scores))


def test_the_led_order_keeps_every_result_and_its_score() -> None:
    from xbrain.semantic.hybrid import fuse, led

    fused = fuse({"lexical": ["a", "b", "c"], "semantic": ["c", "d"]})
    ordered = led(fused, ["a", "b"])
    assert [rid for rid, _, _ in ordered[:2]] == ["a", "b"]
    assert sorted(ordered) == sorted(fused)
    assert led(fused, []) == fused
