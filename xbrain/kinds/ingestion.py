"""Sync receipts and ingestion state: validation with the original's messages.

These records are stored even before the commands that use them (sync, pull, distill)
exist, so import/export of the original single-file store is lossless.
"""

from __future__ import annotations

import re
from typing import Any

from ..errors import InvalidInputError
from ..text import utf16_length
from ..timestamps import parse_timestamp
from .model import ID_PATTERN

__all__ = ["normalize_ingestion", "normalize_receipts"]

HEX64 = re.compile(r"[a-f0-9]{64}", re.ASCII)
MAX_SOURCES = 100
MAX_ENTRIES = 10_000
MAX_SEEN = 10_000


def _hex(value: Any) -> bool:
    return isinstance(value, str) and HEX64.fullmatch(value) is not None


def normalize_receipts(raw: Any) -> dict[str, dict[str, str]]:
    """``{providerKey: {resourceId: revision}}``, validated."""
    error = InvalidInputError("Invalid sync receipt.")
    if not isinstance(raw, dict):
        raise InvalidInputError("Invalid memory store; refusing to overwrite.")
    out: dict[str, dict[str, str]] = {}
    for key, bucket in raw.items():
        if not _hex(key) or not isinstance(bucket, dict):
            raise error
        for rid, rev in bucket.items():
            if not isinstance(rid, str) or not ID_PATTERN.fullmatch(rid) or not _hex(rev):
                raise error
        out[key] = dict(bucket)
    return out


def _continuation(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not 1 <= utf16_length(value) <= 4096:
        raise InvalidInputError("Invalid source continuation/checkpoint.")
    return value


def normalize_source(raw: Any) -> dict[str, Any]:
    """One source progress entry."""
    if not isinstance(raw, dict):
        raise InvalidInputError("Invalid source progress.")
    generation = raw.get("generation", 0)
    if (
        isinstance(generation, bool)
        or not isinstance(generation, int)
        or not (0 <= generation <= 2**53 - 1)
    ):
        raise InvalidInputError("Invalid source generation.")
    seen = raw.get("seen")
    if (
        not isinstance(raw.get("active"), bool)
        or raw.get("coverage") not in ("partial", "full")
        or not isinstance(seen, list)
        or len(seen) > MAX_SEEN
        or not all(_hex(item) for item in seen)
    ):
        raise InvalidInputError("Invalid source progress.")
    return {
        "generation": generation,
        "active": raw["active"],
        "cursor": _continuation(raw.get("cursor")),
        "checkpoint": _continuation(raw.get("checkpoint")),
        "seen": list(seen),
        "coverage": raw["coverage"],
    }


def normalize_capture(raw: Any) -> dict[str, Any]:
    """One capture hash entry (key order: title, revision, updatedAt)."""
    if not isinstance(raw, dict) or not _hex(raw.get("revision")):
        raise InvalidInputError("Invalid source capture.")
    out: dict[str, Any] = {}
    if "title" in raw:
        title = raw["title"]
        if not isinstance(title, str) or utf16_length(title) > 500:
            raise InvalidInputError("Invalid captured title.")
        out["title"] = title
    out["revision"] = raw["revision"]
    updated = raw.get("updatedAt")
    out["updatedAt"] = None if updated is None else parse_timestamp(updated, "updatedAt")
    return out


def normalize_pending(raw: Any) -> dict[str, str]:
    """One distillation queue entry."""
    if (
        not isinstance(raw, dict)
        or not _hex(raw.get("sourceKey"))
        or not _hex(raw.get("sourceRevision"))
    ):
        raise InvalidInputError("Invalid distillation queue.")
    return {"sourceKey": raw["sourceKey"], "sourceRevision": raw["sourceRevision"]}


def normalize_ingestion(raw: Any) -> dict[str, dict[str, Any]]:
    """``{sources, captures, pending}``; a missing value is the empty state."""
    if raw is None:
        return {"sources": {}, "captures": {}, "pending": {}}
    if not isinstance(raw, dict):
        raise InvalidInputError("Invalid ingestion state.")
    sources, captures, pending = (raw.get(name) for name in ("sources", "captures", "pending"))
    if not (isinstance(sources, dict) and isinstance(captures, dict) and isinstance(pending, dict)):
        raise InvalidInputError("Invalid ingestion state.")
    if len(sources) > MAX_SOURCES or len(captures) > MAX_ENTRIES or len(pending) > MAX_ENTRIES:
        raise InvalidInputError("Ingestion state capacity exceeded.")
    for key in sources:
        if not _hex(key):
            raise InvalidInputError("Invalid source progress.")
    for rid in captures:
        if not isinstance(rid, str) or not ID_PATTERN.fullmatch(rid):
            raise InvalidInputError("Invalid source capture.")
    for rid in pending:
        if not isinstance(rid, str) or not ID_PATTERN.fullmatch(rid):
            raise InvalidInputError("Invalid distillation queue.")
    return {
        "sources": {key: normalize_source(value) for key, value in sources.items()},
        "captures": {rid: normalize_capture(value) for rid, value in captures.items()},
        "pending": {rid: normalize_pending(value) for rid, value in pending.items()},
    }
