"""Hypothesis: the path rules (``xbrain.paths``) against a direct reading of the rule.

The product checks every path of every write and of every tree from outside, so its
checks take shortcuts (one regular expression for control characters, plain lower case
for ASCII names). The reference below is the rule written out character by character;
the two must give the same verdict, and the same reason, for any name.
"""

from __future__ import annotations

import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from xbrain.paths import component_problem, path_problem, same_file_key

IGNORABLE = [*range(0x200C, 0x2010), *range(0x202A, 0x202F), *range(0x206A, 0x2070), 0xFEFF]


def reference_key(name: str) -> str:
    kept = "".join(c for c in name if ord(c) not in IGNORABLE)
    return unicodedata.normalize("NFC", kept).casefold()


def reference_problem(name: bytes) -> str | None:
    if not name:
        return "an empty name"
    if len(name) > 255:
        return "a name longer than 255 bytes"
    try:
        text = name.decode("utf-8")
    except UnicodeDecodeError:
        return "not valid UTF-8"
    if text in (".", ".."):
        return f"the special name {text!r}"
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in text):
        return "a name with a control character"
    if "/" in text or "\\" in text:
        return "a name with a slash or backslash"
    if ":" in text:
        return "a name with a colon (an NTFS stream)"
    folded = reference_key(text)
    if folded.rstrip(". ") in (".git", "git~1"):
        return "git's own directory"
    if folded.startswith(".git"):
        return "a name starting with .git (kept for git's own files, such as .gitattributes)"
    return None


# names near the edges: git's own names in any case, ignorable and control characters,
# separators, dots and spaces, long names, and any text at all
EDGES = [".git", ".GIT", "git~1", "GIT~1", ".gitattributes", ".", "..", " ", ":", "/", "\\"]
ODD = ["\x00", "\x1f", "\x7f", "\u200c", "\ufeff", "\u206a", "ß", "İ", "ﬁ", "e\u0301", "é"]
pieces = st.sampled_from([*EDGES, *ODD, "resource_", "a" * 120, "skills", "SKILL.md", "技能"])
names = st.one_of(
    st.lists(pieces, max_size=5).map("".join),
    st.text(max_size=40),
    st.text(alphabet=st.characters(max_codepoint=0x7F), max_size=40),
)


@given(names)
def test_a_component_gets_the_rules_verdict_and_reason(name: str) -> None:
    data = name.encode("utf-8", "surrogatepass")
    assert component_problem(data) == reference_problem(data)
    assert same_file_key(name) == reference_key(name)


@given(st.binary(max_size=40))
def test_any_bytes_get_the_rules_verdict(data: bytes) -> None:
    assert component_problem(data) == reference_problem(data)


@given(st.lists(names, min_size=1, max_size=4))
def test_a_path_is_refused_for_its_first_bad_component(parts: list[str]) -> None:
    path = "/".join(parts)
    expected = None if path and not path.startswith("/") else "not a relative path"
    if expected is None:
        for part in path.split("/"):
            expected = reference_problem(part.encode("utf-8", "surrogatepass"))
            if expected is not None:
                break
    assert path_problem(path) == expected
