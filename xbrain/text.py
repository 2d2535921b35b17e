"""String rules shared by every record: JavaScript lengths, trimming and valid text.

Lengths count UTF-16 code units on the untrimmed value and trimming uses JavaScript's
whitespace set, both for compatibility with the original. Text holding NUL or an
unpaired surrogate is rejected: it cannot round-trip through UTF-8 files.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = [
    "SIMILAR",
    "canonical_url",
    "has_invalid_text",
    "holds_lone_surrogate",
    "js_trim",
    "shared_words",
    "utf16_length",
    "word_set",
]

JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)
_INVALID = re.compile("[\x00\ud800-\udfff]")
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


def shared_words(words: set[str], theirs: set[str]) -> float:
    """The share of two word sets in common (Jaccard), 0 for two empty sets."""
    both = words | theirs
    return len(words & theirs) / len(both) if both else 0.0
