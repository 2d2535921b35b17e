"""What recall needs of every entry, tokenized once: ``.git/xbrain/entries.json``.

Derived data like the search index: it records the commit it reflects, is rebuilt from
the committed entries when that is not ``main`` (or when it is missing or damaged), and
is brought along by each commit's hook (only the entries the commit changed are
tokenized again), so a recall in a fresh process reads one JSON file and no git.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from .tokenize import Tokenizer

__all__ = ["CACHE_FILE", "VERSION", "build", "load", "update"]

CACHE_FILE = Path("xbrain") / "entries.json"
VERSION = 2
_KEPT = (
    "id",
    "kind",
    "name",
    "scope",
    "description",
    "body",
    "oneLiner",
    "events",
    "boost",
    "alwaysOn",
    "status",
    "trust",
    "provenance",
    "updatedAt",
)


def prepared(entry: dict[str, Any], tokenizer: Tokenizer) -> dict[str, Any]:
    """An entry as recall keeps it: its fields and the terms of what it matches on."""
    kept = {key: entry[key] for key in _KEPT}
    kept["revision"] = _revision(entry)
    kept["queries"] = [[q, tokenizer.query_terms(q)] for q in entry["queries"]]
    kept["keywords"] = [[k, tokenizer.query_terms(k)] for k in entry["keywords"]]
    kept["about"] = tokenizer.query_terms(f"{entry['name']} {entry['description']}")
    kept["content"] = sorted(
        set(tokenizer.counts(f"{entry['name']} {entry['description']} {entry['body']}"))
    )
    return kept


def _revision(entry: dict[str, Any]) -> str:
    from ..codec import digest

    return digest(entry)[:16]


def load(control: Path, head: str) -> dict[str, Any] | None:
    """The cache when it reflects ``head``, else None."""
    try:
        data = json.loads((control / CACHE_FILE).read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("version") != VERSION or data.get("commit") != head:
        return None
    return data


def _write(control: Path, data: dict[str, Any]) -> None:
    path = control / CACHE_FILE
    path.parent.mkdir(mode=0o700, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=".entries-", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, ensure_ascii=False, separators=(",", ":"))
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def build(
    control: Path, commit: str, entries: list[dict[str, Any]], tokenizer: Tokenizer
) -> dict[str, Any]:
    """Write the cache for ``commit`` from every committed entry; the cache."""
    data = {
        "version": VERSION,
        "commit": commit,
        "entries": {entry["id"]: prepared(entry, tokenizer) for entry in entries},
    }
    _write(control, data)
    return data


def update(
    control: Path,
    parent: str | None,
    commit: str,
    changed: dict[str, dict[str, Any] | None],
    tokenizer: Tokenizer,
) -> None:
    """Bring a cache that reflected ``parent`` to ``commit`` (``changed``: id → the entry
    now, or None when it is gone). A missing cache, or one at another commit, is left
    for the next recall to rebuild."""
    if parent is None:
        return
    data = load(control, parent)
    if data is None:
        return
    for rid, entry in changed.items():
        if entry is None:
            data["entries"].pop(rid, None)
        else:
            data["entries"][rid] = prepared(entry, tokenizer)
    data["commit"] = commit
    _write(control, data)
