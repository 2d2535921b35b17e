"""The skill diff's lossless tokens and word-level ops."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xbrain.kinds.skilldiff import diff, render, tokens
from xbrain.search.segment import Segmenter


@pytest.fixture(scope="module")
def cut(segment_cache: Path) -> Iterator[Segmenter]:
    segmenter = Segmenter(segment_cache)
    yield segmenter
    segmenter.close()


texts = st.lists(
    st.one_of(
        st.sampled_from(["run ", "the ", "tests", "3.14", "don't", "\n", "\t", "  ", "-", "。"]),
        st.sampled_from(["检查", "对话框", "键盘导航", "南京市长江大桥", "部署", "回滚"]),
        st.characters(blacklist_categories=("Cs",)),
    ),
    max_size=30,
).map("".join)


@settings(max_examples=200, deadline=None)
@given(texts, texts)
def test_tokens_rebuild_the_text_and_ops_rebuild_both_sides(
    cut: Segmenter, old: str, new: str
) -> None:
    assert "".join(tokens(old, cut.cut)) == old
    ops = diff(old, new, cut.cut)
    assert "".join(op["old"] for op in ops) == old
    assert "".join(op["new"] for op in ops) == new
    assert all(op["old"] == op["new"] for op in ops if op["op"] == "equal")
    assert (old == new) == all(op["op"] == "equal" for op in ops)


def test_words_change_not_characters(cut: Segmenter) -> None:
    ops = diff("Run the unit tests first.\n", "Run the integration tests first.\n", cut.cut)
    changed = [op for op in ops if op["op"] != "equal"]
    assert changed == [{"op": "replace", "old": "unit", "new": "integration"}]
    assert render(ops) == "Run the [-unit-]{+integration+} tests first.\n"


def test_chinese_is_diffed_by_word(cut: Segmenter) -> None:
    ops = diff("先检查键盘导航再部署", "先检查对话框再部署", cut.cut)
    assert [op for op in ops if op["op"] != "equal"] == [
        {"op": "replace", "old": "键盘导航", "new": "对话框"}
    ]
    assert tokens("先检查键盘导航再部署", cut.cut) == ["先", "检查", "键盘", "导航", "再", "部署"]


def test_whitespace_and_punctuation_are_kept(cut: Segmenter) -> None:
    assert tokens("a  b\n\tc.d, e's", cut.cut) == ["a", "  ", "b", "\n\t", "c.d", ",", " ", "e's"]


def test_a_segmenter_that_loses_text_cannot_make_a_false_diff() -> None:
    assert tokens("部署回滚", lambda run: ["部署"]) == ["部署回滚"]


def test_an_alert_wording_change_swaps_words(cut: Segmenter) -> None:
    old, new = "请先确认告警级别", "请先核实报警等级"
    ops = diff(old, new, cut.cut)
    assert ops == [
        {"op": "equal", "old": "请先", "new": "请先"},
        {"op": "replace", "old": "确认", "new": "核实"},
        {"op": "replace", "old": "告警", "new": "报警"},
        {"op": "replace", "old": "级别", "new": "等级"},
    ]
    assert "".join(op["old"] for op in ops) == old
    assert "".join(op["new"] for op in ops) == new
    assert render(ops) == "请先[-确认-]{+核实+}[-告警-]{+报警+}[-级别-]{+等级+}"


@settings(max_examples=200, deadline=None)
@given(texts, texts, st.sampled_from([0, 1, 4, 30]))
def test_past_the_budget_ops_still_rebuild_both_sides(
    cut: Segmenter, old: str, new: str, budget: int
) -> None:
    """Texts too big to weigh word by word are matched by lines, and a block too big
    by itself is one op (a tiny budget here makes small texts take those paths)."""
    from unittest import mock

    with mock.patch("xbrain.kinds.skilldiff.PAIR_BUDGET", budget):
        ops = diff(old, new, cut.cut)
    assert "".join(op["old"] for op in ops) == old
    assert "".join(op["new"] for op in ops) == new
    assert all(op["old"] == op["new"] for op in ops if op["op"] == "equal")
    assert (old == new) == all(op["op"] == "equal" for op in ops)
    assert all(op["old"] or op["new"] for op in ops)


def test_unrelated_big_revisions_are_matched_by_lines_then_as_blocks(cut: Segmenter) -> None:
    """Two unrelated 18,000-token texts took difflib 9-22 s word by word; past the budget
    the lines shared are kept as they are and a changed block too big is one op."""
    import random

    rng = random.Random(3)
    words = [f"w{i}" for i in range(50)]

    def text() -> str:  # 750 lines of 12 words
        lines = [" ".join(rng.choice(words) for _ in range(12)) for _ in range(750)]
        return "\n".join(lines)

    shared = "## Shared heading\n"
    old, new = shared + text() + "\n" + shared, shared + text() + "\n" + shared
    ops = diff(old, new, cut.cut)
    assert [op["op"] for op in ops] == ["equal", "replace", "equal"]
    assert ops[0]["old"] == shared and ops[2]["old"].endswith(shared)
    small = old.replace("w7 w8", "w8 w7", 1)  # one swap in a big text: still word by word
    changed = [op for op in diff(old, small, cut.cut) if op["op"] != "equal"]
    assert 1 <= len(changed) <= 3 and all(len(op["old"]) < 10 for op in changed)
