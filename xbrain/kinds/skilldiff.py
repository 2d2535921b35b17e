"""A word-level diff of two texts that rebuilds both exactly (SPEC §12, ``skill diff``).

Text is split into lossless tokens: words by search's rule for Latin text (letters,
digits and ``_``, joined by an inner ``.`` or apostrophe; other scripts' word characters
join them too), each run of Han characters cut into words like jieba's precise cut, each
run of whitespace as one token, and every other character on its own. Joining the tokens
gives the text back, byte for byte, so the diff's ``equal`` and ``delete`` pieces rebuild
the old text and its ``equal`` and ``insert`` pieces the new one. The segmenter is passed
in (``cut``), so this module loads no dictionary itself.

difflib's matcher takes time in proportion to the product of the two lengths when the
texts share little (two unrelated 34 KB revisions: 22 s). Past ``PAIR_BUDGET`` token
pairs, the texts are matched by lines first and only changed blocks within the budget
are diffed by words; a block past it is one ``replace``. The ops still rebuild both.

The ops are lossless and so as long as both texts; :func:`hunks` is what an agent reads
by default: only the changes, each with a few words of context and its line, bounded in
size (a one-word change in a 50 KB file stays well under a kilobyte).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from typing import Any

__all__ = ["Cut", "diff", "hunks", "render", "tokens", "unified"]

Cut = Callable[[str], list[str]]  # a run of Han characters → its words, in order

_TOKEN = re.compile(
    r"(?P<han>[\u4e00-\u9fd5]+)"
    r"|(?P<space>\s+)"
    r"|(?P<word>[^\W\u4e00-\u9fd5]+(?:[.'’][^\W\u4e00-\u9fd5]+)*)"
    r"|(?P<other>.)",
    re.DOTALL,
)


def tokens(text: str, cut: Cut) -> list[str]:
    """The lossless tokens of ``text``: ``"".join(tokens(text, cut)) == text``."""
    out: list[str] = []
    for match in _TOKEN.finditer(text):
        han = match.group("han")
        if han is None:
            out.append(match.group())
            continue
        words = cut(han)
        if "".join(words) != han:  # a segmenter that loses text would make a false diff
            words = [han]
        out.extend(words)
    return out


PAIR_BUDGET = 4_000_000  # token (or line) pairs one matcher may weigh: well under a second


def diff(old: str, new: str, cut: Cut) -> list[dict[str, Any]]:
    """The changes from ``old`` to ``new`` as ops ``{"op", "old", "new"}``, where op is
    ``equal``, ``delete``, ``insert`` or ``replace`` and the texts are token runs. A run of
    changed words replaced by as many words is shown word by word (swaps)."""
    ops: list[dict[str, Any]] = []
    _block(ops, old, new, cut, by_lines=True)
    return ops


def _block(ops: list[dict[str, Any]], old: str, new: str, cut: Cut, by_lines: bool) -> None:
    """Word by word within the budget; past it, by lines first when ``by_lines`` (each
    changed block again within the budget), else one op. Each text is cut once."""
    if old == new:
        if old:
            _append(ops, "equal", old, new)
        return
    a, b = tokens(old, cut), tokens(new, cut)
    if len(a) * len(b) <= PAIR_BUDGET:
        _word_diff(ops, a, b)
        return
    lines_a, lines_b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    if by_lines and len(lines_a) * len(lines_b) <= PAIR_BUDGET:
        matcher = difflib.SequenceMatcher(None, lines_a, lines_b, autojunk=False)
        for op, i1, i2, j1, j2 in matcher.get_opcodes():
            before, after = "".join(lines_a[i1:i2]), "".join(lines_b[j1:j2])
            if op == "equal":
                _append(ops, "equal", before, after)
            else:
                _block(ops, before, after, cut, by_lines=False)
        return
    _append(ops, "replace", old, new)  # past the budget both sides hold tokens


def _word_diff(ops: list[dict[str, Any]], a: list[str], b: list[str]) -> None:
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "replace" and i2 - i1 == j2 - j1:  # as many words each side: word swaps
            for old_word, new_word in zip(a[i1:i2], b[j1:j2], strict=True):
                same = old_word == new_word
                _append(ops, "equal" if same else "replace", old_word, new_word)
            continue
        _append(ops, op, "".join(a[i1:i2]), "".join(b[j1:j2]))


def _append(ops: list[dict[str, Any]], op: str, old: str, new: str) -> None:
    """Add an op, joining it to the previous one when both are ``equal``."""
    if op == "equal" and ops and ops[-1]["op"] == "equal":
        ops[-1]["old"] += old
        ops[-1]["new"] += new
        return
    ops.append({"op": op, "old": old, "new": new})


def render(ops: list[dict[str, Any]]) -> str:
    """A readable rendering: unchanged text as is, ``[-removed-]`` and ``{+added+}``."""
    parts = []
    for op in ops:
        if op["op"] == "equal":
            parts.append(op["old"])
            continue
        if op["old"]:
            parts.append(f"[-{op['old']}-]")
        if op["new"]:
            parts.append(f"{{+{op['new']}+}}")
    return "".join(parts)


CONTEXT = 6  # words of unchanged text kept on each side of a change
CONTEXT_CHARS = 120  # and at most this much of it (text with no spaces: Chinese)
MAX_PIECE = 2_000  # characters of one changed piece shown in a hunk
MAX_HUNKS = 40  # hunks listed per file; the rest are counted
_PIECE = re.compile(r"\s*\S+\s*")
_COUNTED = re.compile(r"[\u4e00-\u9fd5]|[^\W\u4e00-\u9fd5]+")


def _lead(text: str) -> str:
    """The last few words of ``text`` (context before a change)."""
    pieces = _PIECE.findall(text)
    kept = "".join(pieces[-CONTEXT:]) if len(pieces) > CONTEXT else text
    return kept[-CONTEXT_CHARS:]


def _trail(text: str) -> str:
    """The first few words of ``text`` (context after a change)."""
    pieces = _PIECE.findall(text)
    if len(pieces) > CONTEXT:
        text = text[: text.index(pieces[CONTEXT - 1]) + len(pieces[CONTEXT - 1])]
    return text[:CONTEXT_CHARS]


def _cut(text: str) -> tuple[str, bool]:
    if len(text) <= MAX_PIECE:
        return text, False
    half = MAX_PIECE // 2
    return text[:half] + " … " + text[-half:], True


def hunks(ops: list[dict[str, Any]]) -> dict[str, Any]:
    """The changes of ``ops`` as hunks ``{line, ops}`` (``line``: where the hunk starts in
    the old text, 1-based), with a few words of unchanged context around each, and the
    counts of words removed and added (a Han character counts as one word).

    Unchanged text between two changes that is short is kept whole, so they form one
    hunk. A changed piece longer than ``MAX_PIECE`` characters keeps its two ends
    (``truncated``); past ``MAX_HUNKS`` hunks the rest are counted in ``more_hunks``.
    ``--format ops`` gives everything, losslessly.
    """
    found: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    removed = added = 0
    line = 1
    truncated = False
    for at, op in enumerate(ops):
        old = op["old"]
        if op["op"] == "equal":
            if current is not None:
                whole = len(_PIECE.findall(old)) <= 2 * CONTEXT and len(old) <= 2 * CONTEXT_CHARS
                if whole and at < len(ops) - 1:
                    current["ops"].append({"op": "equal", "old": old, "new": old})
                    line += old.count("\n")
                    continue
                current["ops"].append({"op": "equal", "old": _trail(old), "new": _trail(old)})
                current = None
            line += old.count("\n")
            continue
        removed += len(_COUNTED.findall(old))
        added += len(_COUNTED.findall(op["new"]))
        if current is None:
            current = {"line": line, "ops": []}
            previous = ops[at - 1] if at > 0 else None
            if previous is not None and previous["op"] == "equal":
                lead = _lead(previous["old"])
                current["line"] = line - lead.count("\n")
                current["ops"].append({"op": "equal", "old": lead, "new": lead})
            found.append(current)
        old_shown, cut_old = _cut(old)
        new_shown, cut_new = _cut(op["new"])
        truncated = truncated or cut_old or cut_new
        current["ops"].append({"op": op["op"], "old": old_shown, "new": new_shown})
        line += old.count("\n")
    out: dict[str, Any] = {"removed_words": removed, "added_words": added}
    out["hunks"] = found[:MAX_HUNKS]
    if len(found) > MAX_HUNKS:
        out["more_hunks"] = len(found) - MAX_HUNKS
    if truncated:
        out["truncated"] = True
    return out


def unified(path: str, old: str, new: str, labels: tuple[str, str]) -> str:
    """A line diff of one file for people (``diff -u``'s form, three lines of context)."""
    lines = difflib.unified_diff(
        old.splitlines(keepends=True),
        new.splitlines(keepends=True),
        f"a/{path} ({labels[0]})",
        f"b/{path} ({labels[1]})",
    )
    return "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
    )
