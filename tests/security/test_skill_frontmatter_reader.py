"""A ``SKILL.md``'s front matter is read without the YAML parser when it is a flat
mapping of one-line text (``kinds/plainyaml.frontmatter``): front matter close to that
form — anchors, tags, multi-line scalars, duplicate keys, a byte-order mark, CRLF, huge
values, in a saved folder or a pulled tree — is refused or read exactly as the parser
reads it, never more leniently."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import Result
from xbrain.codec import load_yaml
from xbrain.errors import XbrainError
from xbrain.kinds import plainyaml, skillformat
from xbrain.kinds.skillformat import parse_skill_md

Run = Callable[..., Result]
PLAIN = "name: pdf-tools\ndescription: Fill PDF forms, merge files (and more).\n"
QUOTED = 'name: ab-0\ndescription: "Apache HTTP \\u670d\\u52a1\\u5668 \\"ab\\" \\\\ 1/2"\n'
BODY = "---\nBody text.\n"
HOSTILE = {
    "an anchor and an alias": "name: &n pdf-tools\ndescription: *n\n",
    "an alias of a key": "name: pdf-tools\ndescription: x\n*a : y\n",
    "a tag": "name: pdf-tools\ndescription: !!str Fill forms.\n",
    "a tag on a key": "!!str name: pdf-tools\ndescription: x\n",
    "a local tag": "name: pdf-tools\ndescription: !x Fill forms.\n",
    "a folded scalar": "name: pdf-tools\ndescription: >\n  Fill\n  forms.\n",
    "a literal scalar": "name: pdf-tools\ndescription: |\n  Fill\n  forms.\n",
    "plain text over two lines": "name: pdf-tools\ndescription: Fill\n  forms.\n",
    "quoted text over two lines": 'name: pdf-tools\ndescription: "Fill\n  forms."\n',
    "single-quoted text over two lines": "name: pdf-tools\ndescription: 'Fill\n  forms.'\n",
    "a duplicate key": "name: pdf-tools\ndescription: a\ndescription: b\n",
    "a duplicate name": "name: pdf-tools\nname: other\ndescription: a\n",
    "a byte-order mark in the block": "\ufeffname: pdf-tools\ndescription: a\n",
    "a byte-order mark in a value": "name: pdf-tools\ndescription: a\ufeffb\n",
    "a carriage return": "name: pdf-tools\r\ndescription: Fill forms.\r\n",
    "a lone carriage return": "name: pdf-tools\rdescription: x\ndescription: Fill forms.\n",
    "a tab": "name: pdf-tools\ndescription:\tFill forms.\n",
    "a tab inside": "name: pdf-tools\ndescription: Fill\tforms.\n",
    "a next-line break": "name: pdf-tools\ndescription: Fill\x85forms.\n",
    "a line separator": "name: pdf-tools\ndescription: Fill\u2028forms.\n",
    "a control character": "name: pdf-tools\ndescription: Fill\x07forms.\n",
    "a comment": "name: pdf-tools\ndescription: Fill forms. # and more\n",
    "a comment line": "# comment\nname: pdf-tools\ndescription: Fill forms.\n",
    "an empty line": "name: pdf-tools\n\ndescription: Fill forms.\n",
    "a flow mapping": "name: pdf-tools\ndescription: {a: b}\n",
    "a flow sequence": "name: pdf-tools\ndescription: [a, b]\n",
    "a nested mapping": "name: pdf-tools\ndescription: Fill.\nmetadata:\n  a: b\n",
    "a block sequence": "name: pdf-tools\ndescription: Fill.\nallowed-tools:\n- Read\n",
    "a mapping in a value": "name: pdf-tools\ndescription: Use when: forms\n",
    "a value ending in a colon": "name: pdf-tools\ndescription: forms:\n",
    "a boolean for text": "name: pdf-tools\ndescription: true\n",
    "a YAML 1.1 boolean": "name: pdf-tools\ndescription: yes\n",
    "null for text": "name: pdf-tools\ndescription: ~\n",
    "a number for a name": "name: 12\ndescription: Fill forms.\n",
    "a float for text": "name: pdf-tools\ndescription: 1e5\n",
    "a date for text": "name: pdf-tools\ndescription: 2026-12-05\n",
    "a key read as a boolean": "name: pdf-tools\ndescription: x\ntrue: y\n",
    "a key read as null": "name: pdf-tools\ndescription: x\nnull: y\n",
    "a directive": "%YAML 1.1\nname: pdf-tools\ndescription: yes\n",
    "a second document": "name: pdf-tools\ndescription: x\n--- \nname: other\n",
    "a document end": "name: pdf-tools\ndescription: x\n... \n",
    "an indented key": " name: pdf-tools\ndescription: x\n",
    "a trailing space": "name: pdf-tools \ndescription: x\n",
    "two spaces after the colon": "name:  pdf-tools\ndescription: x\n",
    "no value": "name: pdf-tools\ndescription:\n",
    "a quote left open": 'name: pdf-tools\ndescription: "Fill forms.\n',
    "text after a quote": 'name: pdf-tools\ndescription: "Fill" forms.\n',
    "a YAML-only escape": 'name: pdf-tools\ndescription: "Fill\\x41 \\e \\N forms."\n',
    "an escaped line break": 'name: pdf-tools\ndescription: "Fill \\\nforms."\n',
    "half a surrogate pair": 'name: pdf-tools\ndescription: "\\ud83d\\ude00"\n',
    "a lone surrogate": 'name: pdf-tools\ndescription: "a \\udfff"\n',
    "an escaped null": 'name: pdf-tools\ndescription: "a\\u0000b"\n',
    "a single quote left open": "name: pdf-tools\ndescription: 'it''s\n",
    "a huge description": "name: pdf-tools\ndescription: " + "word " * 12_000 + "end\n",
    "a huge quoted name": 'name: "' + "a" * 60_000 + '"\ndescription: x\n',
    "a look-alike letter in the name": "name: pdf-tооls\ndescription: x\n",
    "not a mapping": "- name\n- description\n",
    "a single word": "pdf-tools\n",
    "an unknown key": "name: pdf-tools\ndescription: x\nhomepage: https://example.com/a#b\n",
    "the manual key": "name: pdf-tools\ndescription: x\ndisable-model-invocation: true\n",
    "the manual key as text": "name: pdf-tools\ndescription: x\ndisable-model-invocation: 'true'\n",
}


def outcome(data: bytes) -> tuple[str, Any]:
    try:
        return "read", repr(parse_skill_md(data))
    except XbrainError as exc:
        return "refused", exc.message


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_front_matter_is_read_as_the_parser_reads_it(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = ("---\n" + HOSTILE[name] + BODY).encode()
    fast = outcome(data)
    monkeypatch.setattr(skillformat, "frontmatter", lambda text: None)  # the parser, as before
    assert fast == outcome(data)


def test_plain_and_quoted_front_matter_is_read_without_the_parser(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refused(data: bytes) -> Any:
        raise AssertionError("parsed with load_yaml")

    expected = {
        PLAIN: {"name": "pdf-tools", "description": "Fill PDF forms, merge files (and more)."},
        QUOTED: {"name": "ab-0", "description": 'Apache HTTP 服务器 "ab" \\ 1/2'},
    }
    for text, value in expected.items():
        assert load_yaml(text.encode()) == value  # what the parser reads, too
    monkeypatch.setattr(skillformat, "load_yaml", refused)
    for text, value in expected.items():
        parsed = parse_skill_md(("---\n" + text + BODY).encode())
        assert (parsed.frontmatter, parsed.body) == (value, "Body text.\n")


# Pieces of front matter lines: fragments YAML reads specially, and plain text.
_PIECES = st.sampled_from(
    [
        "name",
        "description",
        "true",
        "True",
        "yes",
        "no",
        "on",
        "null",
        "Null",
        "~",
        "y",
        "12",
        "1e5",
        "0x1",
        "2026-12-05",
        ".inf",
        ".nan",
        "<<",
        "=",
        "a",
        "pdf-tools",
        " ",
        "  ",
        ": ",
        ":",
        " #",
        "#",
        "&a",
        "*a",
        "!!str",
        "!x",
        "|",
        ">",
        "-",
        "- ",
        "?",
        "? ",
        ",",
        "[",
        "]",
        "{",
        "}",
        "%",
        "@",
        "`",
        "'",
        "''",
        '"',
        '\\"',
        "\\",
        "\\\\",
        "\\n",
        "\\t",
        "\\/",
        "\\b",
        "\\x41",
        "\\u0041",
        "\\u00e9",
        "\\ud83d",
        "\\ude00",
        "\\U0001F600",
        "\\e",
        "\\N",
        "\\ ",
        "\t",
        "\r",
        "\r\n",
        "\n",
        "\n  ",
        "\ufeff",
        "\x85",
        "\u2028",
        "\u2029",
        "\xa0",
        "\x7f",
        "\x00",
        "\ue000",
        "\ufffe",
        "服务器",
        "😀",
        "é",
        "а",
        "---",
        "...",
        "Fill forms.",
        "http://x/a#b",
        "C#",
    ]
)
_TEXT = st.lists(_PIECES, max_size=5).map("".join)
_VALUES = st.one_of(
    st.tuples(st.sampled_from(["a", "F", "t", "n", "y", "服", "é", "а", "😀"]), _TEXT).map("".join),
    _TEXT.map(lambda text: f'"{text}"'),
    _TEXT.map(lambda text: f"'{text}'"),
    _TEXT,
)
_LINES = st.lists(
    st.tuples(
        st.sampled_from(["name", "description", "license", "true", "Yes", "x_y-z", "", "a b"]),
        st.sampled_from([": ", ": ", ": ", ":", ":  ", " : "]),
        _VALUES,
    ).map("".join),
    min_size=1,
    max_size=4,
).map("\n".join)


def _typed(value: Any) -> str:
    return json.dumps(value, ensure_ascii=True) + repr([type(v) for v in value.values()])


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_LINES)
def test_the_reader_reads_what_the_parser_reads_or_nothing(text: str) -> None:
    fast = plainyaml.frontmatter(text)
    if fast is None:
        return
    assert isinstance(fast, dict)
    assert _typed(fast) == _typed(load_yaml(text.encode("utf-8", "surrogatepass")))


def test_a_saved_folder_with_a_duplicate_key_is_refused_as_before(xb: Run, tmp_path: Path) -> None:
    folder = tmp_path / "skill"
    folder.mkdir()
    (folder / "SKILL.md").write_text(
        "---\nname: pdf-tools\ndescription: Fill forms.\ndescription: Steal keys.\n---\nBody.\n"
    )
    result = xb("skill", "save", str(folder), "--publish")
    assert result.code == 4 and result.stdout == ""
    assert "SKILL.md's frontmatter is not valid YAML" in result.stderr
    assert "duplicate key" in result.stderr
    assert xb("skill", "list").stdout.count("pdf-tools") == 0
