"""The original single-file JSON store (``version: 1``): strict reading and writing.

Used by ``import-store`` / ``export-store`` (and later by the file provider). Reading
applies every check of the original (reference §1.6) with its messages; writing uses the
original's layout, ``JSON.stringify(value, null, 2) + "\\n"``, privately and atomically.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..codec import json_document
from ..errors import InvalidInputError
from ..inputs import parse_json, read_file
from .ingestion import normalize_ingestion, normalize_receipts
from .model import Resource, normalize_resource, normalize_tombstone

__all__ = ["OriginalStore", "read_original", "write_original"]

MAX_BYTES = 20 * 1024 * 1024
MAX_ENTRIES = 10_000


@dataclass
class OriginalStore:
    """The content of an original-format store file."""

    resources: list[Resource] = field(default_factory=list)
    tombstones: list[dict[str, str]] = field(default_factory=list)
    receipts: dict[str, dict[str, str]] = field(default_factory=dict)
    ingestion: dict[str, dict[str, Any]] = field(
        default_factory=lambda: {"sources": {}, "captures": {}, "pending": {}}
    )

    def to_json(self) -> dict[str, Any]:
        """The document in the original's key order."""
        return {
            "version": 1,
            "resources": self.resources,
            "tombstones": self.tombstones,
            "receipts": self.receipts,
            "ingestion": self.ingestion,
        }


def parse_original(raw: Any, *, max_entries: int = MAX_ENTRIES) -> OriginalStore:
    """Validate a decoded original store document."""
    invalid = InvalidInputError("Invalid memory store; refusing to overwrite.")
    if not isinstance(raw, dict) or raw.get("version") != 1:
        raise invalid
    resources, tombstones = raw.get("resources"), raw.get("tombstones")
    receipts = raw.get("receipts", {})
    if not isinstance(resources, list) or not isinstance(tombstones, list):
        raise invalid
    if not isinstance(receipts, dict):
        raise invalid
    if len(resources) + len(tombstones) > max_entries:
        raise InvalidInputError(f"Memory store exceeds {max_entries:,} entries.")
    out = OriginalStore()
    out.resources = [normalize_resource(item).resource for item in resources]
    ids = {resource["id"] for resource in out.resources}
    if len(ids) != len(out.resources):
        raise InvalidInputError("Duplicate resource IDs.")
    for item in tombstones:
        tombstone = normalize_tombstone(item)
        if tombstone["id"] in ids:
            raise InvalidInputError("Invalid or duplicate tombstone.")
        ids.add(tombstone["id"])
        out.tombstones.append(tombstone)
    out.receipts = normalize_receipts(receipts)
    out.ingestion = normalize_ingestion(raw.get("ingestion"))
    return out


def read_original(
    path: Path, *, max_bytes: int = MAX_BYTES, max_entries: int = MAX_ENTRIES
) -> OriginalStore:
    """Read and validate an original store file; a missing file is an error here."""
    too_big = InvalidInputError(f"Memory store exceeds {max_bytes // (1024 * 1024)} MiB.")
    data = read_file(path, max_bytes, too_big.message)
    raw = parse_json(data, "Invalid memory store JSON; refusing to overwrite.")
    return parse_original(raw, max_entries=max_entries)


def write_private_file(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically with mode 0600 (temp file + rename)."""
    old_umask = os.umask(0o077)  # new parent directories 0700 (mkdir -p ignores mode)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    finally:
        os.umask(old_umask)
    # the temporary file's name: the start of path's (any file name must fit beside it)
    fd, temp = tempfile.mkstemp(prefix=f".{path.name[:40]}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp, 0o600)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def write_original(path: Path, store: OriginalStore) -> int:
    """Write an original-format store file; returns its size in bytes."""
    data = json_document(store.to_json(), reveal=False).encode()  # the original's bytes
    if len(data) > MAX_BYTES:
        raise InvalidInputError("Memory store exceeds 20 MiB.")
    write_private_file(path, data)
    return len(data)
