"""Where each kind of record lives in the store's tree, and the catalog file format.

```
xbrain.yaml                       format marker, optional identity and limits
resources/<aa>/<id>.yaml          one live resource  (<aa>: two hex chars after resource_)
tombstones/<aa>/<id>.yaml         one tombstone
index/catalog/<aa>.json           id → {path, revision, updatedAt|deletedAt, bytes}
index/summary.json                entry and byte totals (for limits and status)
receipts/<providerKey>.json       resource id → last acknowledged revision
ingestion/sources/<key>.json      source pull progress
ingestion/captures/<aa>.json      resource id → capture hash
ingestion/pending.json            the distillation queue, in queue order
```

Sharding by the first two hex characters keeps each file and tree small, so a commit's
cost follows what it changed, not how big the store is.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = [
    "MARKER",
    "PENDING",
    "SUMMARY",
    "catalog_path",
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
CAPTURES_DIR = "ingestion/captures"


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
