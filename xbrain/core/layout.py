"""The store's own files (the kind-agnostic part of the layout) and their formats.

```
xbrain.yaml                       format marker, optional identity and limits
index/catalog/<aa>.json           id → {path, revision, <kind fields>, bytes} of every record
index/summary.json                per-kind counts and byte total (for limits and status)
<kind directory>/<aa>/<id>.yaml   one record (see xbrain.kinds for each kind's directory)
```

``<aa>`` is the first two hex digits of an id after its ``<kind>_`` prefix: sharding by
them keeps each file and tree small, so a commit's cost follows what it changed, not how
big the store is. Everything else a store holds is declared by a kind in the registry.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = [
    "CATALOG_DIR",
    "FORMAT",
    "MARKER",
    "SUMMARY",
    "catalog_path",
    "dump_catalog",
    "dump_json",
    "shard",
]

MARKER = "xbrain.yaml"
FORMAT = "xbrain-store/1"
SUMMARY = "index/summary.json"
CATALOG_DIR = "index/catalog"
HEX2 = r"[0-9a-f]{2}"


def shard(rid: str) -> str:
    """The two-character shard of an id: the first two hex digits after its prefix."""
    at = rid.find("_") + 1
    return rid[at : at + 2]


def catalog_path(shard_name: str) -> str:
    """The catalog shard file for a shard."""
    return f"{CATALOG_DIR}/{shard_name}.json"


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
