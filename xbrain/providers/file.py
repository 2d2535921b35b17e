"""The file provider: another personal memory store on this machine.

The target is either another xbrain store (a directory) or an original-format
single-file JSON store (a ``.json`` path, kept in that format and locked the original's
way, with an exclusive ``<file>.lock``). Upserts refuse a newer or conflicting copy in
the target; deletes remove the target's copy (and its queue entry) without a tombstone;
search is lexical search over the target's resources. The revision argument is unused,
as in the original.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from ..codec import digest
from ..errors import BusyError, ConflictError, InvalidInputError
from ..kinds.jsonstore import OriginalStore, read_original, write_original
from ..kinds.model import Resource
from ..resources import NEWER

if TYPE_CHECKING:
    from . import Host, Target

__all__ = ["FileProvider"]


MAX_ENTRIES = 10_000


def is_json_target(path: Path) -> bool:
    """A ``.json`` path (or an existing file) is an original JSON store; else a directory."""
    return path.suffix.lower() == ".json" or path.is_file()


class FileProvider:
    """``kind: file`` — a JSON store file or an xbrain store directory."""

    kind = "file"

    def __init__(self, key: str, path: Path, host: Host) -> None:
        self.key = key
        self.path = path
        self.host = host

    # -- original JSON store ---------------------------------------------------------------

    @contextlib.contextmanager
    def _json_transaction(self) -> Iterator[OriginalStore]:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        lock = self.path.with_name(self.path.name + ".lock")
        try:
            fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            raise BusyError(
                "Memory store is busy; retry after the other command finishes."
            ) from None
        os.close(fd)
        try:
            data = read_original(self.path) if self.path.exists() else OriginalStore()
            yield data
            if len(data.resources) + len(data.tombstones) > MAX_ENTRIES:
                raise InvalidInputError("Memory store exceeds 10,000 entries.")
            write_original(self.path, data)
        finally:
            lock.unlink(missing_ok=True)

    def _store(self) -> Target:
        return self.host.open_store(self.path)

    # -- the provider interface ------------------------------------------------------------

    def upsert(self, resource: Resource, revision: str) -> None:
        """Put ``resource`` in the target unless it holds a newer or conflicting copy."""
        del revision
        if not is_json_target(self.path):
            self._store().receive(resource)
            return
        with self._json_transaction() as data:
            existing = next((r for r in data.resources if r["id"] == resource["id"]), None)
            if existing is not None and (
                existing["updatedAt"] > resource["updatedAt"]
                or (
                    existing["updatedAt"] == resource["updatedAt"]
                    and digest(existing) != digest(resource)
                )
            ):
                raise ConflictError(NEWER)
            data.resources = [r for r in data.resources if r["id"] != resource["id"]] + [resource]
            data.tombstones = [t for t in data.tombstones if t["id"] != resource["id"]]

    def delete(self, rid: str, revision: str) -> None:
        """Remove the target's copy and its distillation-queue entry (no tombstone)."""
        del revision
        if not is_json_target(self.path):
            self._store().forget(rid)
            return
        with self._json_transaction() as data:
            data.resources = [r for r in data.resources if r["id"] != rid]
            data.ingestion["pending"].pop(rid, None)

    def search(self, query: str, limit: int) -> list[Resource]:
        """Lexical search over the target's resources (no filters)."""
        if not is_json_target(self.path):
            found = self._store().search(query, limit=limit)
            return [hit["resource"] for hit in found["results"]]
        if not self.path.exists():
            return []
        data = read_original(self.path)
        return self.host.rank(data.resources, query, limit)
