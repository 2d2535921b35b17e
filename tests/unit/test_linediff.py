"""``xbrain diff``'s line diffs: difflib's within the budget, one bounded hunk past it."""

from __future__ import annotations

import difflib
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from xbrain.history import linediff

HUNK = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def apply(old: str, lines: list[str]) -> list[str]:
    """The new text's lines: ``lines`` (a unified diff) applied to ``old``, checking that
    every hunk's counts and context agree with the text."""
    a = old.splitlines()
    out: list[str] = []
    at = 0
    body = iter(lines[2:]) if lines else iter(())
    for line in body:
        match = HUNK.fullmatch(line)
        assert match is not None, line
        start, size = int(match[1]), int(match[2] if match[2] is not None else 1)
        new_size = int(match[4] if match[4] is not None else 1)
        first = start - 1 if size else start
        out += a[at:first]
        at = first
        taken = given_lines = 0
        while taken < size or given_lines < new_size:
            piece = next(body)
            kind, text = piece[0], piece[1:]
            if kind in " -":
                assert a[at] == text
                at += 1
                taken += 1
            if kind in " +":
                out.append(text)
                given_lines += 1
    return out + a[at:]


lines_of = st.lists(st.sampled_from(["a", "b", "c", "长", "", "a b"]), max_size=30)


@given(lines_of, lines_of)
def test_within_the_budget_it_is_difflibs_diff(a: list[str], b: list[str]) -> None:
    old, new = "\n".join(a), "\n".join(b)
    a, b = old.splitlines(), new.splitlines()
    expected = list(difflib.unified_diff(a, b, "before", "after", lineterm=""))
    assert linediff.unified(old, new) == expected


@given(lines_of, lines_of, st.integers(0, 40))
def test_past_the_budget_one_hunk_still_turns_old_into_new(
    a: list[str], b: list[str], budget: int
) -> None:
    old, new = "\n".join(a), "\n".join(b)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(linediff, "PAIR_BUDGET", budget)
        lines = linediff.unified(old, new)
    assert (lines == []) == (old.splitlines() == new.splitlines())
    assert apply(old, lines) == new.splitlines()


def test_text_made_to_defeat_difflib_never_reaches_difflib(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """25,000 one-character lines from 125 distinct ones: difflib alone took 445 s."""
    old = "\n".join(chr(0x4E00 + i % 125) for i in range(25_000))
    new = "\n".join(chr(0x4E00 + (i * 7 + 3) % 125) for i in range(25_000))

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("difflib was asked to match 25,000 x 25,000 lines")

    monkeypatch.setattr(linediff.difflib, "unified_diff", refuse)
    lines = linediff.unified("x\n" + old + "\ny", "x\n" + new + "\ny")
    assert lines[2] == "@@ -1,25002 +1,25002 @@"
    assert apply("x\n" + old + "\ny", lines) == ("x\n" + new + "\ny").splitlines()


@given(
    st.lists(st.sampled_from(["x", "y", ""]), max_size=8),
    st.lists(st.sampled_from(["a", "b"]), max_size=20),
    st.lists(st.sampled_from(["c", "d"]), max_size=20),
    st.lists(st.sampled_from(["x", "y", ""]), max_size=8),
)
def test_the_one_hunk_is_the_hunk_difflib_writes_when_nothing_in_between_matches(
    head: list[str], a: list[str], b: list[str], tail: list[str]
) -> None:
    """Framed exactly as difflib frames it: ranges (an empty side too), context, order."""
    old, new = ("".join(line + "\n" for line in head + side + tail) for side in (a, b))
    expected = list(
        difflib.unified_diff(old.splitlines(), new.splitlines(), "before", "after", lineterm="")
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(linediff, "PAIR_BUDGET", -1)
        assert linediff.unified(old, new) == expected
