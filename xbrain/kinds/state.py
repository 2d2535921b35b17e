"""State files features keep in the store (not records): receipts and ingestion state.

```
receipts/<providerKey>.json       resource id → last acknowledged revision
ingestion/sources/<key>.json      source pull progress
ingestion/captures/<aa>.json      resource id → capture hash
ingestion/pending.json            the distillation queue, in queue order
```
"""

from __future__ import annotations

import re

from ..core.layout import HEX2
from ..core.registry import FileKind, register

__all__ = ["PENDING", "SOURCES_DIR", "captures_path", "receipts_path", "source_path"]

PENDING = "ingestion/pending.json"
SOURCES_DIR = "ingestion/sources"
RECEIPTS_DIR = "receipts"
CAPTURES_DIR = "ingestion/captures"
_KEY = r"[0-9a-f]{64}"
_BIG = 64 << 20  # state files grow with the number of ids (limits can be raised)

for _kind in (
    FileKind("receipts", rf"{RECEIPTS_DIR}/{_KEY}\.json", _BIG, "store-files#receipts"),
    FileKind("source", rf"{SOURCES_DIR}/{_KEY}\.json", 4 << 20, "store-files#source"),
    FileKind("captures", rf"{CAPTURES_DIR}/{HEX2}\.json", _BIG, "store-files#captures"),
    FileKind("pending", re.escape(PENDING), _BIG, "store-files#pending"),
):
    register(_kind)


def captures_path(shard_name: str) -> str:
    """The capture-hash shard file for a shard."""
    return f"{CAPTURES_DIR}/{shard_name}.json"


def receipts_path(key: str) -> str:
    """The receipts file of one provider key."""
    return f"{RECEIPTS_DIR}/{key}.json"


def source_path(key: str) -> str:
    """The progress file of one pull source."""
    return f"{SOURCES_DIR}/{key}.json"
