"""The passages each kind of record is found by in the semantic leg (SPEC §14).

A record is embedded as a few passages, not one label: what it says, cut into windows
a sentence model reads well. Each kind declares its own:

* a resource — its head (title, purpose, summary, use-when), then its text in windows of
  ``WINDOW`` words that overlap by ``OVERLAP``, at most ``MAX_TEXT`` of them (a text
  short enough joins the head: one passage);
* an entry — its description, each of its queries, then its body (a memory section's
  text) in windows;
* a skill — its name and description, then each section of its ``SKILL.md`` body (a
  Markdown heading opens one) in windows.

A record scores by its best passage, and a result names it (``snippet``). Chinese has
no spaces: two of its characters count as one word. Everything is bounded: at most
``MAX_PASSAGES`` per record, none longer than ``MAX_CHARS``.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

__all__ = ["MAX_PASSAGES", "OVERLAP", "WINDOW", "passage_of", "passages", "snippet"]

WINDOW = 120  # words per passage: what a sentence model reads well
OVERLAP = 30  # words two neighbouring windows share, so no sentence is only ever cut
MAX_TEXT = 3  # windows of one text (the first ones: where a document says what it is)
MAX_PASSAGES = 12
MAX_CHARS = 2000
SNIPPET = 160
_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_UNIT = re.compile(rf"[{_CJK}]{{1,2}}|[^\s{_CJK}]+")
_HEADING = re.compile(r"^#{1,6}\s+\S.*$", re.MULTILINE)


def _clean(value: Any) -> str:
    if isinstance(value, list):  # a resource's useWhen
        value = "; ".join(str(item) for item in value if isinstance(item, str))
    return " ".join(str(value or "").split())[:MAX_CHARS]


def windows(text: str, limit: int = MAX_TEXT) -> list[str]:
    """``text`` in windows of ``WINDOW`` words overlapping by ``OVERLAP``, the first
    ``limit`` of them (each a slice of the text as written)."""
    text = text[: 40 * WINDOW * (limit + 1)]  # more than the windows can hold is never read
    units = [match.span() for match in _UNIT.finditer(text)]
    out: list[str] = []
    start = 0
    while start < len(units) and len(out) < limit:
        end = min(start + WINDOW, len(units))
        piece = " ".join(text[units[start][0] : units[end - 1][1]].split())[:MAX_CHARS]
        out.append(piece)
        if end == len(units):
            break
        start = end - OVERLAP
    return out


def _sections(body: str) -> list[str]:
    """A Markdown body cut at its headings (each section keeps its heading)."""
    starts = [m.start() for m in _HEADING.finditer(body)]
    bounds = [0, *[s for s in starts if s > 0], len(body)]
    return [body[a:b] for a, b in itertools.pairwise(bounds) if body[a:b].strip()]


def passages(kind: str, doc: dict[str, Any]) -> list[tuple[str, str]]:
    """The passages ``doc`` (an indexed record of ``kind``) is found by: (name, text),
    in a fixed order, so a passage's place names it."""
    out: list[tuple[str, str]] = []
    if kind == "resource":
        head = ". ".join(
            part
            for part in (_clean(doc.get(f)) for f in ("title", "purpose", "summary", "useWhen"))
            if part
        )
        text = str(doc.get("text") or "")
        body = [(f"text {i}", piece) for i, piece in enumerate(windows(text), start=1)]
        if body and len(_UNIT.findall(head)) + len(_UNIT.findall(body[0][1])) <= WINDOW:
            body[0] = ("text 1", f"{head}. {body[0][1]}" if head else body[0][1])  # one passage
        elif head:
            out.append(("title", head))
        out += body
    elif kind == "skill":
        name = _clean(doc.get("name")).replace("-", " ")
        out.append(("description", f"{name}: {_clean(doc.get('description'))}"))
        level1 = doc.get("level1")
        markdown = level1.get("instructions") if isinstance(level1, dict) else None
        for section in _sections(str(markdown or ""))[:MAX_PASSAGES]:
            label = section.strip().splitlines()[0].lstrip("#").strip()[:60]
            out += [(f"section {label}", piece) for piece in windows(section, 2)]
    else:
        out.append(("description", _clean(doc.get("description"))))
        queries = list(doc.get("queries") or [])[:8]  # the cache keeps [text, terms]
        for i, q in enumerate(queries, start=1):
            out.append((f"query {i}", _clean(q[0] if isinstance(q, list) and q else q)))
        pieces = windows(str(doc.get("body") or ""))
        out += [(f"body {i}" if i > 1 else "body", p) for i, p in enumerate(pieces, start=1)]
        if not any(text.strip() for _, text in out):
            out = [("name", _clean(doc.get("name")).replace("-", " "))]
    return [(name, text) for name, text in out if text.strip(" .:;")][:MAX_PASSAGES]


def snippet(text: str) -> str:
    """A passage shortened to show in a result."""
    text = " ".join(text.split())
    return text if len(text) <= SNIPPET else text[: SNIPPET - 1].rstrip() + "…"


def passage_of(kind: str, doc: dict[str, Any], place: int) -> str | None:
    """What a result shows of the passage at ``place``: its name and a snippet (None:
    the record has changed since and has no such passage)."""
    found = passages(kind, doc)
    if not 0 <= place < len(found):
        return None
    name, text = found[place]
    return f"{name}: {snippet(text)}"
