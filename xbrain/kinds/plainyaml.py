"""The block YAML ``codec.dump_yaml`` writes for a skill's state and revisions, read
without the YAML parser; anything else is left to it.

A skill index build reads two such files per skill, and the C parser with ruamel's
resolver and constructor costs more than the checks that follow (≈ 50 µs a file). These
files are the emitter's plain subset: block mappings with simple keys, block sequences
(at the key's indent, as ruamel writes them), scalars that are plain words, single-quoted
text, ``null``, ``true``/``false``, whole numbers, ``[]`` and ``{}``. :func:`load` reads
exactly that, one line at a time, and gives what ``codec.load_yaml`` gives for it (a
tested property: its types too); a line, a character or a word outside that subset —
a comment, a tag, an anchor, a flow collection, a block or double-quoted scalar, a plain
word YAML could read as a date or a float, a tab, a carriage return, a duplicate key —
gives None, and the caller parses with ``load_yaml`` as before. Nothing is trusted more
for being read here: the kind's checks run on the value either way.

:func:`frontmatter` does the same for a ``SKILL.md``'s front matter, which people write:
a flat mapping of one-line text values (plain, single-quoted, or double-quoted with
JSON's escapes, as a script's ``json.dumps`` writes them), every character printable;
anything else (an indented or empty line, a block or multi-line scalar, an anchor, an
alias, a tag, a comment, a flow collection, a duplicate key, a tab, a carriage return, a
byte-order mark, a plain word YAML reads as other than text but ``true``, ``false`` and
``null``, which are read as YAML 1.2 reads them) gives None.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["frontmatter", "load"]

# Text is read here only when it is printable ASCII and newlines: any other character
# (a tab, a carriage return, a control, anything past ASCII) sends it to the parser.
# The patterns are compiled on the first read (every command imports this module;
# few read a skill).
_KEY = r"[A-Za-z_][A-Za-z0-9_-]*"
_SOURCES = {
    "outside": "[^\n\x20-\x7e]",
    # one line of a block mapping: indent, key, then a value after one space or nothing
    "entry": rf"( *)({_KEY}):(?: (.+))?",
    "item_entry": rf"({_KEY}):(?: (.+))?",
    # a plain scalar of word characters and the few others that cannot start or end one
    "plain": r"[A-Za-z0-9_/][A-Za-z0-9_./:@+=-]*",
    "int": r"0|[1-9][0-9]*",
    # a word of digits and a-f (a hash) YAML 1.2 reads as a number: decimal, binary, or
    # an exponent without a dot (1e5); every other such word is text
    "hexlike": r"[0-9a-f]+",
    "number_like": r"[0-9]+|0b[01]+|[0-9]+e[0-9]+",
}
_RE: dict[str, re.Pattern[str]] = {}
_WORDS: dict[str, Any] = {
    **dict.fromkeys(("true", "True", "TRUE"), True),
    **dict.fromkeys(("false", "False", "FALSE"), False),
    **dict.fromkeys(("null", "Null", "NULL"), None),
}
_MAX_INDENT = 64  # deeper than anything xbrain writes: the parser decides


class _Other(Exception):
    """Outside the subset: the parser reads this text."""


def load(data: bytes) -> Any:
    """The value ``codec.load_yaml`` reads from ``data``, when ``data`` is in the subset
    xbrain writes for a skill's files; else None (so: parse it)."""
    if not data.isascii() or not data.endswith(b"\n"):
        return None
    if not _RE:
        _RE.update((name, re.compile(source, re.ASCII)) for name, source in _SOURCES.items())
    text = data.decode("ascii")
    if _RE["outside"].search(text):
        return None
    lines = text.split("\n")
    lines.pop()  # the empty text after the last newline
    try:
        value, end = _mapping(lines, 0, 0, None)
    except _Other:
        return None
    return value if end == len(lines) else None


def _scalar(text: str) -> Any:
    """The value of a scalar written on one line."""
    first = text[0]
    if first == "'":
        if len(text) < 2 or not text.endswith("'"):
            raise _Other
        inner = text[1:-1]
        if "'" in inner.replace("''", ""):
            raise _Other
        return inner.replace("''", "'")
    if text == "[]":
        return []
    if text == "{}":
        return {}
    if not _RE["plain"].fullmatch(text) or text.endswith(":"):
        raise _Other
    if first.isdigit():
        if _RE["int"].fullmatch(text):
            return int(text)
        if not _RE["hexlike"].fullmatch(text) or _RE["number_like"].fullmatch(text):
            raise _Other
        return text
    if first in "tTfFnN" and text in _WORDS:
        return _WORDS[text]
    return text


def _mapping(
    lines: list[str], i: int, indent: int, first: tuple[str, str | None] | None
) -> tuple[dict[str, Any], int]:
    """The block mapping at ``indent`` from line ``i`` (``first``: its first entry, the
    rest of a sequence item's line); the mapping and the line after it."""
    out: dict[str, Any] = {}
    if indent > _MAX_INDENT:
        raise _Other
    entry, count = _RE["entry"].fullmatch, len(lines)
    while True:
        if first is not None:
            key, rest = first
            first = None
        else:
            if i >= count:
                break
            match = entry(lines[i])
            if match is None:
                if len(lines[i]) - len(lines[i].lstrip(" ")) < indent:
                    break  # the parent's next line
                raise _Other
            if len(match[1]) != indent:
                if len(match[1]) < indent:
                    break
                raise _Other
            key, rest = match[2], match[3]
            i += 1
        if key in out or key in _WORDS:  # a duplicate key (the parser's error), or a key
            raise _Other  # YAML reads as true, false or null
        if rest is not None:
            out[key] = _scalar(rest)
        else:
            out[key], i = _nested(lines, i, indent)
    if not out:
        raise _Other
    return out, i


def _nested(lines: list[str], i: int, indent: int) -> tuple[Any, int]:
    """The block value of a key at ``indent`` that has none on its line."""
    if i >= len(lines):
        raise _Other
    line = lines[i]
    if line.startswith("- ", indent) and line[:indent].strip(" ") == "":
        return _sequence(lines, i, indent)
    deeper = indent + 2
    if line[:deeper].strip(" ") == "" and line[deeper : deeper + 1] not in ("", " "):
        return _mapping(lines, i, deeper, None)
    raise _Other


def _sequence(lines: list[str], i: int, indent: int) -> tuple[list[Any], int]:
    """The block sequence whose items start with ``- `` at ``indent``."""
    out: list[Any] = []
    prefix = " " * indent + "- "
    while i < len(lines) and lines[i].startswith(prefix):
        rest = lines[i][len(prefix) :]
        i += 1
        if not rest or rest[0] in " -":
            raise _Other
        match = _RE["item_entry"].fullmatch(rest)
        if match is None:
            out.append(_scalar(rest))
        else:
            item, i = _mapping(lines, i, indent + 2, (match[1], match[2]))
            out.append(item)
    return out, i


# One line of a front matter: a key, one space, a value starting with no space.
_LINE = rf"({_KEY}): ([^ ].*)"
# A double-quoted value whose escapes are JSON's (and YAML's, with the same meaning)
_QUOTED = r'"(?:[^"\\]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"'
_SINGLE = r"'(?:[^']|'')*'"
_SURROGATE = r"\\u[dD][89a-fA-F]"  # half of a pair: joined by JSON, not by YAML
_LINE_RE: list[re.Pattern[str]] = []
# words a YAML resolver of either version reads as other than text (true, null, yes…)
_NOT_TEXT = frozenset(("true", "false", "null", "yes", "no", "on", "off", "y", "n"))


def frontmatter(text: str) -> dict[str, Any] | None:
    """The mapping ``codec.load_yaml`` reads from ``text``, a ``SKILL.md``'s front matter
    (the lines between its ``---``), when it is in the flat subset above; else None."""
    if not _LINE_RE:
        _LINE_RE.extend(re.compile(p) for p in (_LINE, _QUOTED, _SINGLE, _SURROGATE))
    line_re, quoted, single, surrogate = _LINE_RE
    out: dict[str, Any] = {}
    for line in text.split("\n"):
        # a tab, a carriage return, a control, a byte-order mark, a break YAML honours
        # (NEL, U+2028, U+2029), an unassigned or private code point: the parser's
        match = line_re.fullmatch(line) if line.isprintable() else None
        if match is None:
            return None
        key, value = match[1], match[2]
        if key.lower() in _NOT_TEXT or key in out or value.endswith(" "):
            return None
        first = value[0]
        if first == '"':
            if not quoted.fullmatch(value) or surrogate.search(value.replace("\\\\", "")):
                return None
            import json

            out[key] = json.loads(value)
        elif first == "'":
            if not single.fullmatch(value):
                return None
            out[key] = value[1:-1].replace("''", "'")
        elif first.isalpha() and ": " not in value and " #" not in value:
            if value.endswith(":") or value.lower() in _NOT_TEXT:
                if value not in _WORDS:
                    return None
                out[key] = _WORDS[value]  # true, false, null as YAML 1.2 writes them
            else:
                out[key] = value
        else:
            return None
    return out
