"""Where each kind of record lives in the store's tree, and the catalog file format.

```
xbrain.yaml                       format marker, optional identity and limits
resources/<aa>/<id>.yaml          one live resource  (<aa>: two hex chars after resource_)
tombstones/<aa>/<id>.yaml         one tombstone
index/catalog/<aa>.json           id → {path, revision, updatedAt|deletedAt, bytes}
index/summary.json                entry and byte totals (for limits and status)
index/urls/<hh>.json              canonical URL → live resource ids (<hh>: sha256 of the URL)
receipts/<providerKey>.json       resource id → last acknowledged revision
ingestion/sources/<key>.json      source pull progress
ingestion/captures/<aa>.json      resource id → capture hash
ingestion/pending.json            the distillation queue, in queue order
```

Sharding by the first two hex characters keeps each file and tree small, so a commit's
cost follows what it changed, not how big the store is.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

__all__ = [
    "KINDS",
    "MARKER",
    "PENDING",
    "SUMMARY",
    "catalog_path",
    "classify",
    "dump_catalog",
    "record_path",
    "shard",
]

MARKER = "xbrain.yaml"
FORMAT = "xbrain-store/1"
SUMMARY = "index/summary.json"
PENDING = "ingestion/pending.json"
SOURCES_DIR = "ingestion/sources"
RECEIPTS_DIR = "receipts"
RESOURCES_DIR = "resources"
TOMBSTONES_DIR = "tombstones"
CATALOG_DIR = "index/catalog"
URLS_DIR = "index/urls"
CAPTURES_DIR = "ingestion/captures"


_HEX2 = r"[0-9a-f]{2}"
_KEY = r"[0-9a-f]{64}"


def _record(directory: str, kind: str) -> str:
    # the shard folder must be the id's own first two hex digits
    return rf"{directory}/(?P<{kind}_shard>{_HEX2})/resource_(?P={kind}_shard)[0-9a-f]{{62}}\.yaml"


# Every path a store may hold, by kind; a path matching none has no place in a store.
_PATTERNS = {
    "marker": re.escape(MARKER),
    "resource": _record(RESOURCES_DIR, "resource"),
    "tombstone": _record(TOMBSTONES_DIR, "tombstone"),
    "catalog": rf"{CATALOG_DIR}/{_HEX2}\.json",
    "urls": rf"{URLS_DIR}/{_HEX2}\.json",
    "summary": re.escape(SUMMARY),
    "receipts": rf"{RECEIPTS_DIR}/{_KEY}\.json",
    "source": rf"{SOURCES_DIR}/{_KEY}\.json",
    "captures": rf"{CAPTURES_DIR}/{_HEX2}\.json",
    "pending": re.escape(PENDING),
}
KINDS = tuple(_PATTERNS)


@functools.cache
def _classifier() -> re.Pattern[str]:
    # compiled on first use: only checks of incoming trees need it, not every command
    return re.compile("|".join(f"(?P<{k}>{v})" for k, v in _PATTERNS.items()), re.ASCII)


def classify(path: str) -> str | None:
    """Which kind of file ``path`` is in the store's layout, or None when it has no place."""
    match = _classifier().fullmatch(path)
    if match is None:
        return None
    return next(kind for kind in KINDS if match.group(kind) is not None)


def shard(rid: str) -> str:
    """The two-character shard of a resource id."""
    return rid[9:11]


def record_path(kind: str, rid: str) -> str:
    """``resources/<aa>/<id>.yaml`` or ``tombstones/<aa>/<id>.yaml``."""
    directory = RESOURCES_DIR if kind == "resource" else TOMBSTONES_DIR
    return f"{directory}/{shard(rid)}/{rid}.yaml"


def catalog_path(shard_name: str) -> str:
    """The catalog shard file for a shard."""
    return f"{CATALOG_DIR}/{shard_name}.json"


def url_shard(canonical: str) -> str:
    """The shard of a canonical URL in the URL index (first two hex of its sha256)."""
    import hashlib

    return hashlib.sha256(canonical.encode()).hexdigest()[:2]


def urls_path(shard_name: str) -> str:
    """The URL-index shard file: canonical URL → ids of the live resources citing it."""
    return f"{URLS_DIR}/{shard_name}.json"


def captures_path(shard_name: str) -> str:
    """The capture-hash shard file for a shard."""
    return f"{CAPTURES_DIR}/{shard_name}.json"


def receipts_path(key: str) -> str:
    """The receipts file of one provider key."""
    return f"{RECEIPTS_DIR}/{key}.json"


def source_path(key: str) -> str:
    """The progress file of one pull source."""
    return f"{SOURCES_DIR}/{key}.json"


def dump_catalog(entries: dict[str, Any]) -> bytes:
    """A JSON object with one sorted entry per line (small, readable line diffs)."""
    lines = [
        f"  {json.dumps(key)}: {json.dumps(entries[key], ensure_ascii=False, sort_keys=True)}"
        for key in sorted(entries)
    ]
    body = ",\n".join(lines)
    return ("{\n" + body + "\n}\n" if lines else "{}\n").encode()


def dump_json(value: Any) -> bytes:
    """A small state file: 2-space JSON, non-ASCII kept, trailing newline."""
    return (json.dumps(value, ensure_ascii=False, indent=2) + "\n").encode()
