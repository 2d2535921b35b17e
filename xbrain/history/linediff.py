"""A unified diff of two texts, in bounded time (``xbrain diff``'s ``lines``).

difflib's matcher takes time in proportion to the product of the two lengths on text
made to defeat it: a resource text of 25,000 one-character lines (50,000 characters, the
limit) drawn from a hundred distinct ones took ``xbrain diff`` 445 s. The common first
and last lines are taken out first (an edit is usually local); when what is left holds
more than ``PAIR_BUDGET`` line pairs, it is shown as one change — every old line of it
removed, every new line added — framed as difflib frames a hunk. Either way the lines
are a valid unified diff that turns the old text into the new one.
"""

from __future__ import annotations

import difflib

from ..kinds.skilldiff import PAIR_BUDGET

__all__ = ["unified"]

CONTEXT = 3  # lines of context around a change, as difflib's default


def unified(old: str, new: str) -> list[str]:
    """The unified diff (``--- before`` / ``+++ after``) of ``old`` and ``new`` by lines."""
    a, b = old.splitlines(), new.splitlines()
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    if a == b:
        return []
    if (len(a) - head - tail) * (len(b) - head - tail) <= PAIR_BUDGET:
        return list(difflib.unified_diff(a, b, "before", "after", lineterm=""))
    start, end_a, end_b = head - min(head, CONTEXT), len(a) - tail, len(b) - tail
    stop_a, stop_b = end_a + min(tail, CONTEXT), end_b + min(tail, CONTEXT)
    return [
        "--- before",
        "+++ after",
        f"@@ -{_range(start, stop_a)} +{_range(start, stop_b)} @@",
        *(" " + line for line in a[start:head]),
        *("-" + line for line in a[head:end_a]),
        *("+" + line for line in b[head:end_b]),
        *(" " + line for line in a[end_a:stop_a]),
    ]


def _range(start: int, stop: int) -> str:
    """A hunk's line range as unified diffs write it (1-based; empty: the line before)."""
    length = stop - start
    if length == 1:
        return str(start + 1)
    return f"{start + 1 if length else start},{length}"
