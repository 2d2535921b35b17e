"""Hypothesis: the skill files' plain YAML reader (``kinds/plainyaml``) gives exactly what
``load_yaml`` gives, types included, or None (the parser reads it): for whatever
``dump_yaml`` writes, and for any text at all, edited dumps and hostile text included."""

from __future__ import annotations

from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from xbrain.codec import dump_yaml, load_yaml
from xbrain.kinds import plainyaml

# words that look like other YAML values, and the characters that make plain text quoted
TRICKY = [
    *("true", "False", "NULL", "null", "~", "yes", "on", "0", "07", "0777", "0b11", "0x1f"),
    *("0o7", "1e5", "1E5", "1_000", ".inf", ".nan", "-5", "+5", "1.0", "2026-12-05", "12:30"),
    *("0e1", "00ff", "e5", "ab:cd", "ab:", "a #b", "a: b", "- a", "'q'", '"d"', "&a", "*a"),
    *("!!str x", "%x", "@x", "`x", "x ", " x", "", "a\nb", "\t", "\r", "\x85", "\u2028", "\ufeff"),
    *("é", "目录", "\U0001f600", "\x7f", "<<", "=", "[]", "{}", "[a]", "{a: b}", "?", ":"),
]
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**20), 10**20),
    st.sampled_from(TRICKY),
    st.text(alphabet="0123456789abcdef", max_size=12),
    st.text(alphabet="abcdef0123456789:/._-+=@ 'tTrRuUeEnNlLxob#", max_size=12),
    st.text(max_size=12),
)
keys = st.one_of(
    st.sampled_from(["id", "slug", "state", "files", "true", "null", "a-b", "_x", "on"]),
    st.text(alphabet="abcXY_-0: ", min_size=1, max_size=6),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(keys, inner, max_size=4)),
    max_leaves=20,
)
# and documents mostly of what the reader takes, so that it is taken often
words = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(0, 10**6),
    st.text(alphabet="0123456789abcdef", min_size=1, max_size=12),
    st.text(alphabet="abtTrRuUeEfFnNlL01_/.:@+=-'", min_size=1, max_size=8),
    st.sampled_from(TRICKY),
)
plain = st.recursive(
    words,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(keys, inner, max_size=4)),
    max_leaves=20,
)
documents = st.one_of(
    st.dictionaries(keys, values, min_size=1, max_size=6),
    st.dictionaries(st.sampled_from(["id", "state", "n", "_x", "a-b"]), plain, min_size=1),
)


def typed(value: Any) -> Any:
    """``value`` with each scalar's type beside it (``True == 1`` in Python)."""
    if isinstance(value, dict):
        return {"dict": [(typed(k), typed(v)) for k, v in value.items()]}
    if isinstance(value, list):
        return {"list": [typed(v) for v in value]}
    return (type(value).__name__, value)


def parsed(data: bytes) -> Any:
    try:
        return typed(load_yaml(data))
    except Exception as exc:  # whatever the parser refuses, the plain reader must not read
        return ("error", type(exc).__name__)


def agrees(data: bytes) -> bool:
    """The plain reader left ``data`` to the parser, or read what the parser reads."""
    fast = plainyaml.load(data)
    return fast is None or typed(fast) == parsed(data)


@settings(max_examples=400, deadline=None)
@given(documents)
def test_what_dump_yaml_writes_reads_back_the_same(document: dict[str, Any]) -> None:
    data = dump_yaml(document)
    fast = plainyaml.load(data)
    assert fast is None or typed(fast) == typed(load_yaml(data)) == typed(document)


def edits(data: bytes) -> st.SearchStrategy[bytes]:
    return st.lists(
        st.tuples(st.integers(0, len(data)), st.integers(0, 3), st.binary(max_size=4)),
        min_size=1,
        max_size=3,
    ).map(lambda changes: edited(data, changes))


def edited(data: bytes, changes: list[tuple[int, int, bytes]]) -> bytes:
    for at, cut, put in changes:
        data = data[:at] + put + data[at + cut :]
    return data


@settings(max_examples=600, deadline=None)
@given(documents.map(dump_yaml).flatmap(edits))
@example(b"id: a\nid: b\n")  # a duplicate key: ruamel's error
@example(b"a: &x b\nc: *x\n")  # an anchor and its alias
@example(b"a: !!str 1\n")  # a tag
@example(b"a: 1 # note\n")  # a comment
@example(b"a:\n  - b\n")  # a sequence indented under its key
@example(b"a:\n    b: c\n")  # a mapping four spaces in
@example(b"a:\n")  # an empty value
@example(b"a: b\n\n")  # a blank line
@example(b"a: b")  # no final newline
@example(b"\xef\xbb\xbfa: b\n")  # a byte-order mark
@example(b"a: b\r\n")  # a carriage return
@example(b"a:\tb\n")  # a tab
@example(b"a: 'b\n  c'\n")  # a quoted scalar over two lines
@example(b"a: 2026-12-05\n")  # a date
@example(b"a: 0b101\n")  # a binary number
@example(b"a: 12e34\n")  # an exponent
@example(b"true: a\n")  # a key YAML reads as a boolean
@example(b"- a\n")  # a sequence document
@example(b"---\na: b\n")  # a document marker
@example(b"a: b\n---\nc: d\n")  # two documents
def test_any_text_reads_the_same_or_goes_to_the_parser(data: bytes) -> None:
    assert agrees(data)


@given(st.binary(max_size=80))
def test_any_bytes_read_the_same_or_go_to_the_parser(data: bytes) -> None:
    assert agrees(data)


def test_a_skills_files_as_xbrain_writes_them_are_read_without_the_parser() -> None:
    state = {
        "id": "skill_" + "ab" * 32,
        "slug": "sort-files-0",
        "status": "active",
        "status_changed": "2026-12-05T05:31:00.446Z",
        "head": "rev_" + "0e" * 16,
        "revisions": [
            {
                "id": "rev_" + "0e" * 16,
                "number": 1,
                "parent": None,
                "created": "2026-12-05T05:31:00.446Z",
                "state": "published",
                "state_changed": "2026-12-05T05:31:00.446Z",
                "published_at": "2026-12-05T05:31:00.446Z",
            }
        ],
    }
    revision = {
        "id": "rev_" + "0e" * 16,
        "skill_id": state["id"],
        "slug": "sort-files-0",
        "parent": None,
        "number": 1,
        "created": "2026-12-05T05:31:00.446Z",
        "source": {"type": "import", "url": "https://example.com/a.git", "ref": "main"},
        "canonical_hash": "sha256:" + "12" * 32,
        "files": [
            {"path": "SKILL.md", "type": "instructions", "sha256": "0" * 63 + "a", "bytes": 542},
            {"path": "scripts/run.sh", "type": "script", "sha256": "9" * 64, "bytes": 7},
        ],
    }
    revision["files"][1]["executable"] = True
    for value in (state, revision):
        assert typed(plainyaml.load(dump_yaml(value))) == typed(value)
