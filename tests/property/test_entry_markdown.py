"""Entries rendered as Markdown read back to the same entry, whatever their text."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from xbrain.kinds.entry import KINDS, normalize_entry
from xbrain.kinds.entryformat import parse_markdown, render_file

NOW = "2026-06-01T00:00:00.000Z"
CHARS = st.lists(
    st.one_of(
        st.sampled_from(list(":'\"#-|>&*!%@`{}[],?\\ 部署回滚检查")),
        st.characters(min_codepoint=0x20, max_codepoint=0x7E),
        st.characters(min_codepoint=0x4E00, max_codepoint=0x4FFF),
    ),
    max_size=40,
).map("".join)
LINE = CHARS.filter(lambda s: s.strip() != "")
TEXT = st.lists(CHARS, max_size=4).map("\n".join)


@st.composite
def entries(draw: Any) -> dict[str, Any]:
    raw = {
        "kind": draw(st.sampled_from(KINDS)),
        "name": draw(LINE),
        "description": draw(TEXT),
        "body": draw(TEXT),
        "oneLiner": draw(CHARS),
        "queries": draw(st.lists(LINE, max_size=3)),
        "keywords": draw(st.lists(LINE.filter(lambda s: len(s) <= 100), max_size=3)),
        "events": draw(st.lists(st.sampled_from(["Stop", "PreToolUse"]), max_size=2)),
        "boost": draw(st.sampled_from([0, 0.05, -0.2, 0.2, 0.125])),
        "alwaysOn": draw(st.booleans()),
        "caseSensitive": draw(st.booleans()),
        "status": draw(st.sampled_from(["active", "retired"])),
        "trust": draw(st.sampled_from(["trusted", "untrusted"])),
        "scope": draw(st.sampled_from(["global", "project:github.com/org/repo"])),
        "updatedAt": NOW,
    }
    entry, dropped = normalize_entry(raw, NOW)
    assert not dropped
    return entry


@given(entries())
def test_render_then_parse_gives_the_same_entry(entry: dict[str, Any]) -> None:
    text = render_file(entry)
    (raw,) = parse_markdown(text, "rules/x.md", "rule")
    again, dropped = normalize_entry(raw, "2000-01-01T00:00:00.000Z")
    assert not dropped
    assert {k: v for k, v in again.items() if k != "source"} == entry
    assert again["source"]["markdown"] == text


# What memory files are made of, around headings: the pieces where the old pattern's
# lazy title and trailing blanks meet (tabs, CR, ideographic spaces, blank lines).
PIECES = ["#", "##", "## ", " ", "  ", "\t", "x", "\n", "\r", "\u3000", "y z", "\n\n", "部署"]


@given(st.lists(st.sampled_from(PIECES), max_size=20).map("".join))
def test_headings_split_as_the_old_pattern_did(text: str) -> None:
    """The linear heading scan finds the sections ``^## +(.+?)\\s*$`` found (same starts,
    ends and titles), so memory files import exactly as before; that pattern took
    quadratic time on a long run of blanks in a line."""
    import re

    from xbrain.kinds.entryformat import headings

    pattern = re.compile(r"^## +(.+?)\s*$", re.MULTILINE)
    assert headings(text) == [(m.start(), m.end(), m.group(1)) for m in pattern.finditer(text)]
