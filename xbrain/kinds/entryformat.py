"""Entries as Markdown (memex's format): frontmatter in, frontmatter out, losslessly.

A file with YAML frontmatter is one entry; its keys are memex's (``type``, ``one-liner``,
``hooks``, ``queries``, ``keywords``, ``caseSensitive``, ``paths``, ``boost``, ``status``)
plus xbrain's own
when they differ from the default (``scope``, ``trust``, ``provenance``, ``always-on``,
``updated``; ``supersedes``, ``valid-from``, ``valid-until``, ``proposed-by`` when set).
A memory file without frontmatter is one entry per ``## `` section, named
``<file stem>#<section title>`` (text before the first section travels with the first).
Every imported entry keeps the exact Markdown it came from, so an export writes an
unchanged entry back byte for byte; an entry changed since is rendered from its fields.
"""

from __future__ import annotations

import re
from typing import Any

from ..codec import dump_yaml, load_yaml, yaml_problem
from ..errors import InvalidInputError

__all__ = [
    "FOLDERS",
    "cut_utf8",
    "file_stem",
    "headings",
    "parse_markdown",
    "render_file",
    "unchanged_since_import",
]

# folder → the kind of an entry there that does not say (memex's skills are procedures)
FOLDERS = {"rules": "rule", "memory": "memory", "skills": "workflow"}
_KIND_OF_TYPE = {"skill": "workflow"}
_FROM_FRONTMATTER = {
    "name": "name",
    "description": "description",
    "type": "kind",
    "queries": "queries",
    "keywords": "keywords",
    "caseSensitive": "caseSensitive",
    "paths": "paths",
    "hooks": "events",
    "one-liner": "oneLiner",
    "boost": "boost",
    "status": "status",
    "scope": "scope",
    "trust": "trust",
    "provenance": "provenance",
    "always-on": "alwaysOn",
    "updated": "updatedAt",
    "supersedes": "supersedes",
    "valid-from": "validFrom",
    "valid-until": "validUntil",
    "proposed-by": "proposedBy",
}
_FACTS = ("supersedes", "validFrom", "validUntil", "proposedBy")  # written when set
_TO_FRONTMATTER = {field: key for key, field in _FROM_FRONTMATTER.items()}
_DEFAULTS = {
    "description": "",
    "queries": [],
    "keywords": [],
    "caseSensitive": False,
    "paths": [],
    "events": [],
    "oneLiner": "",
    "boost": 0.0,
    "status": "active",
    "scope": "global",
    "trust": "trusted",
    "provenance": None,
    "alwaysOn": False,
}
_HEADING_LINE = re.compile(r"^##( +)(.*)$", re.MULTILINE)
_NOT_SPACE = re.compile(r"\S")


def headings(text: str) -> list[tuple[int, int, str]]:
    """Each ``## title`` line as (start, end, title), exactly as the pattern
    ``^## +(.+?)\\s*$`` (multi-line) matches it — the title without trailing blanks, the
    end after the blank lines that follow it — in linear time: that pattern takes
    quadratic time on a long run of blanks inside a line (a 256 KiB line: minutes)."""
    found = []
    for line in _HEADING_LINE.finditer(text):
        spaces, tail = line.group(1), line.group(2)
        if not tail and len(spaces) < 2:
            continue  # "## " alone is no heading
        title = tail.rstrip() or (tail[:1] if tail else " ")
        after = line.start(2) + len(title) if tail else line.end()
        blank = _NOT_SPACE.search(text, after)
        stop = len(text) if blank is None else blank.start()
        end = stop if stop == len(text) else text.rfind("\n", after, stop)
        found.append((line.start(), end, title))
    return found


def _split_frontmatter(text: str) -> tuple[dict[str, Any], str] | None:
    if not text.startswith("---\n"):
        return None
    end = text.find("\n---\n", 3)
    closing = 5
    if end == -1:
        if text.endswith("\n---"):
            end, closing = len(text) - 4, 4
        else:
            raise InvalidInputError("The frontmatter is not closed by '---'.")
    try:
        meta = load_yaml(text[4:end].encode())
    except Exception as exc:  # ruamel's errors: all mean the same here
        message = yaml_problem(exc, first_line=2)
        raise InvalidInputError(f"The frontmatter is not valid YAML: {message}") from None
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise InvalidInputError("The frontmatter must be a mapping of keys.")
    return meta, text[end + closing :]


def parse_markdown(text: str, path: str, default_kind: str) -> list[dict[str, Any]]:
    """The entries of one Markdown file at ``path`` (relative, POSIX) as raw fields.
    Windows line endings (CRLF) are read as plain ones: a file's line breaks are its
    format, not its content (a lone CR stays, and is refused as a control character)."""
    text = text.replace("\r\n", "\n")
    stem = path.rsplit("/", 1)[-1].removesuffix(".md")
    split = _split_frontmatter(text)
    if split is not None:
        meta, body = split
        raw: dict[str, Any] = {"kind": default_kind, "name": stem}
        for key, value in meta.items():
            field = _FROM_FRONTMATTER.get(str(key), str(key))  # unknown keys: dropped later
            raw[field] = value
        raw["kind"] = _KIND_OF_TYPE.get(raw["kind"], raw["kind"])
        raw["body"] = body
        raw["source"] = {"path": path, "section": None, "order": 0, "markdown": text}
        return [raw]
    heads = headings(text)
    if default_kind != "memory" or not heads:
        source = {"path": path, "section": None, "order": 0, "markdown": text}
        return [{"kind": default_kind, "name": stem, "body": text, "source": source}]
    out = []
    for order, (head_start, head_end, title) in enumerate(heads):
        start = 0 if order == 0 else head_start
        end = heads[order + 1][0] if order + 1 < len(heads) else len(text)
        source = {"path": path, "section": title, "order": order, "markdown": text[start:end]}
        body = text[head_end:end].removeprefix("\n")
        out.append({"kind": "memory", "name": f"{stem}#{title}", "body": body, "source": source})
    return out


def unchanged_since_import(entry: dict[str, Any], parsed: dict[str, Any]) -> bool:
    """True when ``entry`` still says exactly what its source Markdown says (``parsed``:
    that Markdown normalized again), so the source can be written back as it was."""
    ignore = {"updatedAt", "source"}
    return {k: v for k, v in entry.items() if k not in ignore} == {
        k: v for k, v in parsed.items() if k not in ignore
    }


def render_file(entry: dict[str, Any]) -> str:
    """An entry as a Markdown file with frontmatter (memex's keys; xbrain's when set)."""
    meta: dict[str, Any] = {"name": entry["name"], "type": entry["kind"]}
    for field in (
        "description",
        "queries",
        "keywords",
        "caseSensitive",
        "paths",
        "events",
        "oneLiner",
        "boost",
        "status",
        "scope",
        "trust",
        "provenance",
        "alwaysOn",
    ):
        if entry.get(field, _DEFAULTS[field]) != _DEFAULTS[field]:
            meta[_TO_FRONTMATTER[field]] = entry[field]
    meta["updated"] = entry["updatedAt"]
    meta.update((_TO_FRONTMATTER[field], entry[field]) for field in _FACTS if field in entry)
    body: str = entry["body"]
    return "---\n" + dump_yaml(meta).decode() + "---\n" + body


def render_section(entry: dict[str, Any]) -> str:
    """A memory entry as a ``## `` section of its file (title from ``stem#title``)."""
    title = entry["name"].split("#", 1)[1] if "#" in entry["name"] else entry["name"]
    body: str = entry["body"]
    return f"## {title}\n{body}"


STEM_CHARS = 80  # a file named after an entry: its name cut to 80 characters and 240
STEM_BYTES = 240  # bytes, so a suffix (``-2``, a piece of the id) and ``.md`` still fit


def file_stem(entry: dict[str, Any]) -> str:
    """A file name (without ``.md``) made of an entry's name: other characters than
    letters, digits, ``.``, ``_`` and ``-`` become ``-``; its id when nothing is left."""
    stem = re.sub(r"[^\w.-]+", "-", entry["name"]).strip("-.")[:STEM_CHARS]
    return cut_utf8(stem, STEM_BYTES) or str(entry["id"][6:18])


def cut_utf8(text: str, limit: int) -> str:
    """``text`` without the characters past ``limit`` bytes of UTF-8."""
    return text.encode()[:limit].decode(errors="ignore")
