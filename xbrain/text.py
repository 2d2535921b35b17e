"""String rules shared by every record: JavaScript lengths, trimming and valid text.

Lengths count UTF-16 code units on the untrimmed value and trimming uses JavaScript's
whitespace set, both for compatibility with the original. Text holding NUL or an
unpaired surrogate is rejected: it cannot round-trip through UTF-8 files.

Characters that hide text from a reviewer (Trojan Source) are refused in the short
fields a reviewer reads at a glance — a resource's title, an entry's name, description
and one-liner, a skill's description — and kept in bodies, where every JSON document
xbrain prints writes them as ``\\u`` escapes (:func:`reveal_hidden`): the same value to a
parser, visible to a person.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = [
    "SIMILAR",
    "canonical_url",
    "has_invalid_text",
    "hidden_character",
    "holds_lone_surrogate",
    "js_trim",
    "mark_hidden",
    "refuse_hidden",
    "reveal_hidden",
    "shared_words",
    "utf16_length",
    "word_set",
]

JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)
_INVALID = re.compile("[\x00\ud800-\udfff]")
# What can hide text from a reviewer: the bidirectional embeddings, overrides and isolates
# (U+202A-202E, U+2066-2069) reorder what a screen shows; the zero-width space, word
# joiner, invisible operators, byte-order mark, Mongolian vowel separator and the tag
# characters (U+E0000-E007F, also a way to smuggle instructions to a model) show nothing.
# The marks (LRM, RLM, ALM) and the joiners (ZWNJ, ZWJ) are not here: right-to-left,
# Persian, Indic and emoji text is spelt with them, and none reorders or hides a word.
_HIDDEN = re.compile(
    "[\u202a-\u202e\u2066-\u2069\u200b\u2060-\u2064\ufeff\u180e\U000e0000-\U000e007f"
    # control characters but tab and line breaks: a terminal escape (ESC [2J) or a bell
    # rewrites what a reviewer's terminal shows
    "\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]"
)
_SURROGATE = re.compile("[\ud800-\udfff]")


def utf16_length(text: str) -> int:
    """Length in UTF-16 code units, as JavaScript's ``String.length``."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def js_trim(text: str) -> str:
    """JavaScript's ``String.prototype.trim``."""
    return text.strip(JS_WHITESPACE)


def has_invalid_text(text: str) -> bool:
    """True when the text holds NUL or an unpaired surrogate."""
    return _INVALID.search(text) is not None


def hidden_character(text: str) -> str | None:
    """The first character of ``text`` that can hide text from a reviewer, as ``U+XXXX``
    (see ``_HIDDEN``), or None."""
    found = _HIDDEN.search(text)
    return None if found is None else f"U+{ord(found.group()):04X}"


def refuse_hidden(value: Any, field: str) -> None:
    """Refuse a short field holding a bidirectional control or an invisible character:
    what a reviewer reads at a glance must be what an agent gets (InvalidInputError)."""
    from .errors import InvalidInputError

    found = hidden_character(value) if isinstance(value, str) else None
    if found is not None:
        raise InvalidInputError(
            f"Invalid {field}; it holds {found}, an invisible, bidirectional or control "
            "character that can hide text from a reviewer."
        )


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000  # a tag character: its UTF-16 surrogate pair, as JSON spells it
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def reveal_hidden(document: str) -> str:
    """A JSON document with every hidden character (bodies keep them) written as its
    ``\\u`` escape: the same value to a parser, visible to a person reading it. Such a
    character is never part of JSON's syntax, so it only ever stands in a string."""
    return _HIDDEN.sub(_escaped, document) if _HIDDEN.search(document) else document


def mark_hidden(text: str) -> str:
    """``text`` with every hidden character replaced by a visible mark (``<U+202E>``):
    what a hook puts before a model, which the user reads as the model does. A JSON
    document stays valid (the mark is plain text inside the string it stood in)."""
    return _HIDDEN.sub(lambda m: f"<U+{ord(m.group()):04X}>", text)


def holds_lone_surrogate(value: Any) -> bool:
    """Whether any text in ``value`` (parsed JSON or YAML: keys too, at any depth) holds an
    unpaired surrogate, which JSON can escape (``\\ud800``) but no UTF-8 file can hold."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def canonical_url(href: str) -> str:
    """The form two stored URLs share when they name the same page.

    Stored URLs are already WHATWG-normalized (lower-case scheme and host, default port
    and dot segments gone); this also drops the fragment and a trailing slash of a
    non-root path. Plain string work, so search can use it without a URL parser.
    """
    base = href.split("#", 1)[0]
    head, sep, query = base.partition("?")
    if head.count("/") > 3 and head.endswith("/"):
        head = head.rstrip("/")
    return head + sep + query


# Two records look like the same subject (a write's possibleConflicts) when this share of
# their words is in common: entries by name and description, resources by title and purpose
SIMILAR = 0.6
_WORD = re.compile(r"[^\W_]+")
# compiled on first use, not at import: its Unicode class costs ~1.5 ms to compile, paid
# by every fresh recall and hook that import this module and never compare two records
_CJK = r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]"


def word_set(text: str) -> set[str]:
    """The lowercased words of ``text``, each CJK character a word of its own."""
    return set(_WORD.findall(re.sub(_CJK, lambda m: f" {m.group()} ", text.lower())))


def likeliest_conflicts(found: list[tuple[float, dict[str, Any]]]) -> list[dict[str, Any]]:
    """A write's ``possibleConflicts``: the ten likeliest of ``found`` ((share of words,
    conflict); a same title or name counts as more than any share), most words shared
    first, then by id."""
    return [conflict for _, conflict in sorted(found, key=lambda f: (-f[0], f[1]["id"]))[:10]]


def shared_words(words: set[str], theirs: set[str]) -> float:
    """The share of two word sets in common (Jaccard), 0 for two empty sets."""
    both = words | theirs
    return len(words & theirs) / len(both) if both else 0.0
