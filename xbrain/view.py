"""Reading records out of one commit, and staging changes on top of it.

``View`` reads resources, tombstones, the catalog and state files from a snapshot,
re-normalizing every record exactly as the original did on read. ``Transaction`` adds
an overlay of staged changes and keeps the catalog shards and the summary in step with
them, so the catalog is always committed in the same commit as the change it describes.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from . import layout
from .codec import canonical_json, digest, dump_yaml, load_yaml
from .errors import CorruptStoreError, InvalidInputError, XbrainError
from .git import Snapshot
from .model import Resource, parse_record
from .text import canonical_url

__all__ = [
    "LimitError",
    "StoreConfig",
    "Transaction",
    "View",
    "count_change",
    "derived_files",
    "url_index",
]

DEFAULT_IDENTITY = "xbrain <xbrain@localhost>"
DEFAULT_MAX_ENTRIES = 10_000
DEFAULT_MAX_BYTES = 20 * 1024 * 1024


class LimitError(InvalidInputError):
    """A write would take the store past one of its limits."""

    code = "limit_exceeded"


@dataclass(frozen=True)
class StoreConfig:
    """Settings read from ``xbrain.yaml`` (committed, so they travel with the store)."""

    identity: str = DEFAULT_IDENTITY
    max_entries: int = DEFAULT_MAX_ENTRIES
    max_bytes: int = DEFAULT_MAX_BYTES

    @classmethod
    def from_marker(cls, data: bytes | None) -> StoreConfig:
        """Parse the marker file; a missing or foreign one means this is not a store."""
        if data is None:
            raise CorruptStoreError("Not an xbrain store (no xbrain.yaml); refusing to touch it.")
        try:
            raw = load_yaml(data)
        except Exception as exc:
            raise CorruptStoreError("Invalid xbrain.yaml; run xbrain doctor.") from exc
        if not isinstance(raw, dict) or raw.get("format") != layout.FORMAT:
            raise CorruptStoreError(
                f"Unsupported store format (expected {layout.FORMAT}); upgrade xbrain."
            )
        identity, limits = raw.get("identity") or {}, raw.get("limits") or {}
        if not isinstance(identity, dict) or not isinstance(limits, dict):
            raise CorruptStoreError("Invalid xbrain.yaml (identity/limits); run xbrain doctor.")
        name, email = identity.get("name"), identity.get("email")
        if not all(v is None or _IDENTITY_TEXT.fullmatch(str(v)) for v in (name, email)):
            raise CorruptStoreError("Invalid xbrain.yaml (identity); run xbrain doctor.")
        raised = []
        for key, floor in (("maxEntries", DEFAULT_MAX_ENTRIES), ("maxBytes", DEFAULT_MAX_BYTES)):
            value = limits.get(key, floor)
            if isinstance(value, bool) or not isinstance(value, int):
                raise CorruptStoreError(f"Invalid xbrain.yaml (limits.{key}); run xbrain doctor.")
            raised.append(max(floor, value))
        # one part alone is completed from the default (xbrain <xbrain@localhost>)
        ident = (
            f"{name or 'xbrain'} <{email or 'xbrain@localhost'}>"
            if name or email
            else DEFAULT_IDENTITY
        )
        return cls(identity=ident, max_entries=raised[0], max_bytes=raised[1])

    def limits(self) -> dict[str, int]:
        """The limits in force."""
        return {"maxEntries": self.max_entries, "maxBytes": self.max_bytes}


_IDENTITY_TEXT = re.compile(r"[^<>\x00-\x1f\x7f]{1,100}")
CONFIG_KEYS = ("identity.name", "identity.email", "limits.maxEntries", "limits.maxBytes")


def set_config_value(marker: bytes | None, key: str, value: str) -> bytes:
    """The marker file with one setting changed (validated)."""
    StoreConfig.from_marker(marker)
    raw = load_yaml(marker or b"")
    if key not in CONFIG_KEYS:
        raise InvalidInputError(f"Unknown setting {key!r}; use one of: {', '.join(CONFIG_KEYS)}.")
    section, name = key.split(".")
    if section == "identity":
        if not _IDENTITY_TEXT.fullmatch(value) or value != value.strip():
            raise InvalidInputError(
                f"Invalid {key}; use one line without < > or control characters."
            )
        parsed: Any = value
    else:
        floor = DEFAULT_MAX_ENTRIES if name == "maxEntries" else DEFAULT_MAX_BYTES
        if not value.isdigit() or int(value) < floor:
            raise InvalidInputError(f"Invalid {key}; limits can only be raised (at least {floor}).")
        parsed = int(value)
    raw.setdefault(section, {})[name] = parsed
    return dump_yaml(raw)


def marker_bytes() -> bytes:
    """The marker file of a new store."""
    return dump_yaml({"format": layout.FORMAT})


def record_bytes(record: dict[str, Any]) -> int:
    """A record's size as the original single-file store would hold it."""
    return len(canonical_json(record).encode())


def catalog_entry(kind: str, record: dict[str, Any]) -> dict[str, Any]:
    """The catalog line of one resource or tombstone."""
    entry: dict[str, Any] = {"path": layout.record_path(kind, record["id"])}
    entry["revision"] = digest(record)
    if kind == "resource":
        entry["updatedAt"] = record["updatedAt"]
    else:
        entry["deletedAt"] = record["deletedAt"]
    entry["bytes"] = record_bytes(record)
    return entry


def url_index(live: dict[str, str]) -> dict[str, bytes]:
    """The URL-index files for live resources ``id → source.url`` (derived data)."""
    shards: dict[str, dict[str, list[str]]] = {}
    for rid in sorted(live):
        canonical = canonical_url(live[rid])
        shards.setdefault(layout.url_shard(canonical), {}).setdefault(canonical, []).append(rid)
    return {layout.urls_path(name): layout.dump_catalog(urls) for name, urls in shards.items()}


def derived_files(
    entries: dict[str, dict[str, Any]], live_urls: dict[str, str]
) -> dict[str, bytes]:
    """The catalog shards, summary and URL index that records imply (all derived data).

    ``entries``: id → catalog entry of every record; ``live_urls``: id → source URL of
    every live resource. The one derivation doctor checks against and merges write.
    """
    shards: dict[str, dict[str, Any]] = {}
    summary = {"resources": 0, "tombstones": 0, "bytes": 0}
    for rid, entry in entries.items():
        shards.setdefault(layout.shard(rid), {})[rid] = entry
        count_change(summary, None, entry)
    out = {layout.catalog_path(name): layout.dump_catalog(e) for name, e in shards.items()}
    out[layout.SUMMARY] = layout.dump_json(summary)
    out.update(url_index(live_urls))
    return out


def count_change(totals: dict[str, int], old: dict[str, Any] | None, new: Any) -> None:
    """Move summary ``totals`` from catalog entry ``old`` to ``new`` (either may be None)."""
    for item, sign in ((old, -1), (new, 1)):
        if item is not None:
            totals[entry_kind(item) + "s"] += sign
            totals["bytes"] += sign * item["bytes"]


def entry_kind(entry: dict[str, Any]) -> str:
    """``resource`` or ``tombstone`` from a catalog entry's path."""
    return "resource" if entry["path"].startswith(layout.RESOURCES_DIR + "/") else "tombstone"


class View:
    """Read-only access to the records of one commit."""

    def __init__(self, snap: Snapshot) -> None:
        self.snap = snap
        self._shards: dict[str, dict[str, Any]] = {}

    def read(self, path: str) -> bytes | None:
        """Raw bytes of a committed file."""
        return self.snap.read(path)

    def read_json(self, path: str, default: Any) -> Any:
        """A committed JSON state file, or ``default`` when absent."""
        data = self.read(path)
        if data is None:
            return default
        try:
            return json.loads(data)
        except ValueError as exc:
            raise CorruptStoreError(f"{path} is not valid JSON; run xbrain doctor.") from exc

    def config(self) -> StoreConfig:
        """The store's settings."""
        return StoreConfig.from_marker(self.read(layout.MARKER))

    def catalog_shard(self, shard: str) -> dict[str, Any]:
        """Catalog entries of one shard (cached)."""
        entries: dict[str, Any] = self._shard_file(self._shards, layout.catalog_path(shard))
        return entries

    def _shard_file(self, cache: dict[str, Any], path: str) -> Any:
        """A sharded JSON object file, read once per view (a damaged one is an error)."""
        entries = cache.get(path)
        if entries is None:
            entries = self.read_json(path, {})
            if not isinstance(entries, dict):
                raise CorruptStoreError(f"{path} is damaged; run xbrain doctor.")
            cache[path] = entries
        return entries

    def entry(self, rid: str) -> dict[str, Any] | None:
        """The catalog entry of an id, resource or tombstone."""
        entry: dict[str, Any] | None = self.catalog_shard(layout.shard(rid)).get(rid)
        return entry

    def catalog(self) -> dict[str, dict[str, Any]]:
        """Every catalog entry (all shards), by id."""
        entries: dict[str, dict[str, Any]] = {}
        for name in sorted(self.snap.listdir(layout.CATALOG_DIR)):
            entries.update(self.catalog_shard(name.removesuffix(".json")))
        return entries

    def summary(self) -> dict[str, int]:
        """Entry and byte totals."""
        data: dict[str, int] = self.read_json(
            layout.SUMMARY, {"resources": 0, "tombstones": 0, "bytes": 0}
        )
        return data

    def _record(self, kind: str, rid: str) -> dict[str, Any] | None:
        path = layout.record_path(kind, rid)
        data = self.read(path)
        if data is None:
            return None
        try:
            return parse_record(kind, data)
        except XbrainError as exc:
            raise CorruptStoreError(f"Stored record {path} is invalid: {exc}") from exc

    def resource(self, rid: str) -> Resource | None:
        """A live resource, re-normalized, or None."""
        return self._record("resource", rid)

    def tombstone(self, rid: str) -> dict[str, str] | None:
        """A tombstone, or None."""
        record = self._record("tombstone", rid)
        return None if record is None else {"id": record["id"], "deletedAt": record["deletedAt"]}


class Transaction(View):
    """A view plus staged changes; ``finish`` yields the file changes to commit."""

    def __init__(self, snap: Snapshot, config: StoreConfig, command: str) -> None:
        super().__init__(snap)
        self.settings = config
        self.command = command
        self.actions: list[tuple[str, str, str | None]] = []
        self.subject: str | None = None
        self.commit_id: str | None = None
        self.changes: dict[str, bytes | None] = {}
        self._summary: dict[str, int] | None = None
        self._dirty: set[str] = set()
        self._url_shards: dict[str, dict[str, list[str]]] = {}
        self._url_dirty: set[str] = set()
        self._urls_checked = False

    def totals(self) -> dict[str, int]:
        """Entry and byte totals including staged changes."""
        return dict(self._summary) if self._summary is not None else self.summary()

    def read(self, path: str) -> bytes | None:
        """Staged bytes first, then the committed file."""
        if path in self.changes:
            return self.changes[path]
        return self.snap.read(path)

    def write(self, path: str, data: bytes | None) -> None:
        """Stage a file write (None deletes); identical bytes stage nothing."""
        if self.read(path) == data:
            return
        if self.snap.read(path) == data:
            self.changes.pop(path, None)
        else:
            self.changes[path] = data

    def write_json(self, path: str, value: Any) -> None:
        """Stage a JSON state file."""
        self.write(path, layout.dump_json(value))

    def _set_entry(self, rid: str, entry: dict[str, Any] | None) -> None:
        if self._summary is None:
            self._summary = dict(self.summary())
        shard = self.catalog_shard(layout.shard(rid))
        count_change(self._summary, shard.get(rid), entry)
        if entry is None:
            shard.pop(rid, None)
        else:
            shard[rid] = entry
        self._dirty.add(layout.shard(rid))

    # -- the URL index: canonical URL → live ids (for sameUrlAs) ---------------------------

    def _urls(self, shard: str) -> dict[str, list[str]]:
        self._build_url_index_once()
        entries: dict[str, list[str]] = self._shard_file(self._url_shards, layout.urls_path(shard))
        return entries

    def _build_url_index_once(self) -> None:
        """A store written before the URL index existed gets it in this commit, once."""
        if self._urls_checked:
            return
        self._urls_checked = True
        if self.snap.listdir(layout.URLS_DIR) or not self.summary()["resources"]:
            return
        for _, blob in self.snap.files(layout.RESOURCES_DIR):
            record = parse_record("resource", self.snap.blob(blob))
            self._move_url(record["id"], None, record["source"]["url"])

    def _move_url(self, rid: str, old: str | None, new: str | None) -> None:
        for url, add in ((old, False), (new, True)):
            if url is None:
                continue
            canonical = canonical_url(url)
            shard = layout.url_shard(canonical)
            entries = self._urls(shard)
            ids = set(entries.get(canonical, ()))
            if add:
                ids.add(rid)
            else:
                ids.discard(rid)
            if ids:
                entries[canonical] = sorted(ids)
            else:
                entries.pop(canonical, None)
            self._url_dirty.add(shard)

    def same_url(self, rid: str, url: str) -> list[str]:
        """Other live resources whose canonical URL is ``url``'s (staged changes included)."""
        canonical = canonical_url(url)
        return [i for i in self._urls(layout.url_shard(canonical)).get(canonical, ()) if i != rid]

    def _live_url(self, rid: str) -> str | None:
        old = self.resource(rid)
        return None if old is None else str(old["source"]["url"])

    def put_resource(self, resource: Resource) -> None:
        """Stage a live resource, replacing any tombstone of the same id."""
        rid = resource["id"]
        self._move_url(rid, self._live_url(rid), resource["source"]["url"])
        self.write(layout.record_path("tombstone", rid), None)
        self.write(layout.record_path("resource", rid), dump_yaml(resource))
        self._set_entry(rid, catalog_entry("resource", resource))

    def put_tombstone(self, tombstone: dict[str, str]) -> None:
        """Stage a tombstone, removing the live resource of the same id."""
        rid = tombstone["id"]
        self._move_url(rid, self._live_url(rid), None)
        self.write(layout.record_path("resource", rid), None)
        self.write(layout.record_path("tombstone", rid), dump_yaml(tombstone))
        self._set_entry(rid, catalog_entry("tombstone", tombstone))

    def remove_resource(self, rid: str) -> None:
        """Stage the removal of a live resource without a tombstone (provider-side delete)."""
        self._move_url(rid, self._live_url(rid), None)
        self.write(layout.record_path("resource", rid), None)
        self._set_entry(rid, None)

    def finish(self) -> dict[str, bytes | None]:
        """Write catalog shards and summary, enforce limits, return the changes."""
        for shard in sorted(self._dirty):
            entries = self._shards[layout.catalog_path(shard)]
            data = layout.dump_catalog(entries) if entries else None
            self.write(layout.catalog_path(shard), data)
        for shard in sorted(self._url_dirty):
            urls = self._url_shards[layout.urls_path(shard)]
            self.write(layout.urls_path(shard), layout.dump_catalog(urls) if urls else None)
        if self._summary is not None:
            count = self._summary["resources"] + self._summary["tombstones"]
            if count > self.settings.max_entries:
                raise LimitError(f"Memory store exceeds {self.settings.max_entries:,} entries.")
            if self._summary["bytes"] > self.settings.max_bytes:
                raise LimitError(
                    f"Memory store exceeds {self.settings.max_bytes // (1024 * 1024)} MiB."
                )
            self.write_json(layout.SUMMARY, self._summary)
        return dict(self.changes)
