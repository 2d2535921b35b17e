"""Reading records out of one commit, and staging changes on top of it.

``View`` reads records of any registered kind, the catalog and state files from a
snapshot, re-normalizing every record through its kind. ``Transaction`` adds an overlay
of staged changes and keeps the catalog shards, the summary and every kind's derived
files in step with them, so they are always committed with the change they describe.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from ..errors import CorruptStoreError, XbrainError
from ..git import Snapshot
from ..secretscan import Finding, check_texts, record_texts
from . import layout
from .config import LimitError, StoreConfig
from .derive import catalog_entry, count_change, empty_summary
from .registry import Derived, DerivedState, limited_count, record_kind, record_kinds
from .shards import Placement, Staged, shard_entries

__all__ = ["Transaction", "View", "parse_stored", "record_count"]

Record = dict[str, Any]


def parse_stored(parse: Callable[[bytes], Record], path: str, data: bytes) -> Record:
    """A committed record's bytes, parsed and re-normalized; a store file no parser
    accepts is a CorruptStoreError naming it."""
    try:
        return parse(data)
    except XbrainError as exc:
        reason = str(exc).rstrip(".")
        raise CorruptStoreError(
            f"Stored record {path} is invalid: {reason}; run xbrain doctor."
        ) from exc


def record_count(summary: dict[str, int]) -> int:
    """How many records a summary counts (every kind; what the catalog's depth follows)."""
    return sum(value for key, value in summary.items() if key != "bytes")


class View:
    """Read-only access to the records of one commit."""

    def __init__(self, snap: Snapshot) -> None:
        self.snap = snap
        self._shards: dict[str, dict[str, Any]] = {}
        self._placement: Placement | None = None

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

    def listdir(self, path: str) -> list[str]:
        """Names directly under a committed directory."""
        return self.snap.listdir(path)

    def children(self, path: str) -> dict[str, str]:
        """Name → object id of each committed entry directly under ``path`` (a changed id
        means something under that name changed)."""
        return self.snap.children(path)

    def files(self, prefix: str) -> Iterator[tuple[str, bytes]]:
        """Every committed file ``(path, bytes)`` under ``prefix``."""
        for path, blob in self.snap.files(prefix):
            yield path, self.snap.blob(blob)

    def config(self) -> StoreConfig:
        """The store's settings."""
        return StoreConfig.from_marker(self.read(layout.MARKER))

    def catalog_placement(self) -> Placement:
        """How many hex digits name each committed catalog prefix's shards (two, or three
        or four once the store has grown)."""
        if self._placement is None:
            self._placement = Placement(self.snap.listdir, layout.CATALOG_DIR)
        return self._placement

    def catalog_shard(self, shard: str) -> dict[str, Any]:
        """Catalog entries of one shard (cached), by its key (two to four hex digits)."""
        path = layout.catalog_path(shard)
        entries = self._shards.get(path)
        if entries is None:
            entries = self._shards[path] = shard_entries(path, self.read(path))
        return entries

    def entry(self, rid: str) -> dict[str, Any] | None:
        """The catalog entry of an id (a record of any kind)."""
        depth = self.catalog_placement().depth(layout.shard(rid))
        if depth is None:
            return None
        key = layout.id_digits(rid)[:depth]
        entry: dict[str, Any] | None = self.catalog_shard(key).get(rid)
        return entry

    def catalog_keys(self) -> list[str]:
        """The keys of the committed catalog shards, in order."""
        return sorted(
            layout.key_of(layout.CATALOG_DIR, path)
            for path, _ in self.snap.files(layout.CATALOG_DIR)
        )

    def catalog(self) -> dict[str, dict[str, Any]]:
        """Every catalog entry (all shards), by id."""
        entries: dict[str, dict[str, Any]] = {}
        for key in self.catalog_keys():
            entries.update(self.catalog_shard(key))
        return entries

    def summary(self) -> dict[str, int]:
        """Per-kind counts and the byte total."""
        data: dict[str, int] = self.read_json(layout.SUMMARY, empty_summary())
        return data

    def derived_missing(self) -> str | None:
        """A committed catalog file that is missing while records it covers exist (a plain
        git commit removed ``index/``), or None. Writing on top would build wrong counts
        and listings on it: writes refuse until ``doctor --repair`` re-derives it."""
        shards: set[str] = set()
        for spec in record_kinds():
            shards.update(self.listdir(spec.directory))
        if not shards:
            return None
        if self.read(layout.SUMMARY) is None:
            return layout.SUMMARY
        present = {name.removesuffix(".json") for name in self.listdir(layout.CATALOG_DIR)}
        missing = sorted(shards - present)
        return layout.catalog_path(missing[0]) if missing else None

    def require_derived(self) -> None:
        """CorruptStoreError when :meth:`derived_missing` finds a catalog file gone."""
        missing = self.derived_missing()
        if missing is not None:
            raise CorruptStoreError(
                f"{missing} is missing while records it covers exist (a commit made outside "
                "xbrain removed it); run xbrain doctor --repair."
            )

    def record(self, kind: str, rid: str) -> Record | None:
        """The record ``rid`` of ``kind``, parsed and re-normalized, or None."""
        spec = record_kind(kind)
        path = spec.path(rid)
        data = self.read(path)
        return None if data is None else parse_stored(spec.parse, path, data)


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
        # path → (bytes, record, parsed) of each record put_record staged: what an
        # after-commit hook reads instead of parsing the bytes again (``staged_record``)
        self._staged: dict[str, tuple[bytes, Record, bool]] = {}
        self._absent: set[str] = set()  # committed paths that hold no file
        self._summary: dict[str, int] | None = None
        self._catalog: Staged | None = None
        self._derived: dict[str, DerivedState] = {}
        # detectors a person allowed for this write (--allow-secret), and what they let in
        self.allow_secrets: frozenset[str] = frozenset()
        self.allowed_secrets: list[Finding] = []

    def totals(self) -> dict[str, int]:
        """Per-kind counts and byte total including staged changes."""
        return dict(self._summary) if self._summary is not None else self.summary()

    def read(self, path: str) -> bytes | None:
        """Staged bytes first, then the committed file."""
        if path in self.changes:
            return self.changes[path]
        return self._committed(path)

    def _committed(self, path: str) -> bytes | None:
        """The committed file; a path found absent once is not looked up again (a new
        record's path is read some eight times as a batch stages it)."""
        if path in self._absent:
            return None
        data = self.snap.read(path)
        if data is None:
            self._absent.add(path)
        return data

    def write(self, path: str, data: bytes | None) -> None:
        """Stage a file write (None deletes); identical bytes stage nothing."""
        if self.read(path) == data:
            return
        if self._committed(path) == data:
            self.changes.pop(path, None)
        else:
            self.changes[path] = data

    def write_json(self, path: str, value: Any) -> None:
        """Stage a JSON state file."""
        self.write(path, layout.dump_json(value))

    def derived(self, index: Derived) -> DerivedState:
        """The state of a derived index in this transaction (started on first use)."""
        state = self._derived.get(index.name)
        if state is None:
            state = self._derived[index.name] = index.start(self)
        return state

    def _staged_catalog(self) -> Staged:
        if self._catalog is None:
            count = record_count(self.summary())
            read, listdir = self.read, self.snap.listdir
            self._catalog = Staged(
                layout.CATALOG_DIR, read, listdir, shard_entries, layout.id_digits, count
            )
        return self._catalog

    def catalog_shard(self, shard: str) -> dict[str, Any]:
        """Catalog entries of one shard as staged."""
        return self._staged_catalog().shard(shard)

    def entry(self, rid: str) -> dict[str, Any] | None:
        """The catalog entry of an id as staged."""
        catalog = self._staged_catalog()
        entry: dict[str, Any] | None = catalog.shard(catalog.key(layout.id_digits(rid))).get(rid)
        return entry

    def _set_entry(self, rid: str, entry: dict[str, Any] | None) -> None:
        if self._summary is None:
            self._summary = dict(self.summary())
        catalog = self._staged_catalog()
        key = catalog.key(layout.id_digits(rid))
        shard = catalog.shard(key)
        count_change(self._summary, shard.get(rid), entry)
        if entry is None:
            shard.pop(rid, None)
        else:
            shard[rid] = entry
        catalog.dirty.add(key)

    def scan_secrets(self, texts: Iterable[tuple[str, str]]) -> None:
        """Refuse a likely secret in any of ``(field, text)`` (InvalidInputError, exit 4)
        unless its detector is allowed; an allowed one goes into the commit's trailers."""
        self.allowed_secrets += check_texts(texts, self.allow_secrets)

    def put_record(self, kind: str, record: Record, *, parsed: bool = False) -> None:
        """Stage a record, replacing the record of the same id in any sibling kind; its
        text fields are scanned for secrets first (those it keeps unchanged are not: a
        secret allowed once stays allowed when the record is edited). ``parsed``: the
        record is what its kind's parse gives for the bytes it is written as (its kind
        normalized it: the caller vouches), so a hook may use it as it is."""
        spec = record_kind(kind)
        rid = record["id"]
        old = self._replaced(kind, rid)
        kept = set(record_texts(old)) if old is not None else set()
        self.scan_secrets([item for item in record_texts(record) if item not in kept])
        for sibling in spec.siblings:
            self._drop(sibling, rid)
        for index in spec.derived:  # (the siblings dropped: the record's own is still old)
            self.derived(index).change(rid, old, record)
        path, data = spec.path(rid), spec.serialize(record)
        self.write(path, data)
        self._staged[path] = (data, record, parsed)
        self._set_entry(rid, catalog_entry(spec, record))

    def staged_record(self, path: str, data: bytes, *, parsed: bool = False) -> Record | None:
        """The record :meth:`put_record` serialized to ``data`` at ``path`` (what the
        commit holds there), or None: another write of the path came after it, or none
        staged it. The record as it was given, not read back from ``data``: its kind's
        parse of ``data`` gives the same values once re-normalized (a YAML round trip of
        strings, lists and mappings is the identity, a property test); it is not to be
        changed once staged. ``parsed``: only a record staged as what its kind's parse
        gives (``put_record``'s ``parsed``), else None."""
        found = self._staged.get(path)
        if found is None or (found[0] is not data and found[0] != data):
            return None
        return found[1] if found[2] or not parsed else None

    def remove_record(self, kind: str, rid: str) -> None:
        """Stage the removal of a record (no tombstone)."""
        self._drop(kind, rid)
        self._set_entry(rid, None)

    def _drop(self, kind: str, rid: str) -> None:
        spec = record_kind(kind)
        for index in spec.derived:
            old = self._replaced(kind, rid)
            if old is not None:
                self.derived(index).change(rid, old, None)
        self.write(spec.path(rid), None)

    def _replaced(self, kind: str, rid: str) -> Record | None:
        """The record a write replaces, or None: absent, or damaged (no parser accepts
        it). Replacing a damaged record is how it is put right (``restore``); what its
        derived entries said is then unknown, and ``doctor --repair`` re-derives them."""
        try:
            return self.record(kind, rid)
        except CorruptStoreError:
            return None

    def finish(self) -> dict[str, bytes | None]:
        """Write catalog shards, derived files and summary, enforce limits; the changes."""
        if self._summary is not None and self._catalog is not None:
            for path, data in self._catalog.files(record_count(self._summary)).items():
                self.write(path, data)
        for state in self._derived.values():
            for path, data in state.files().items():
                self.write(path, data)
        if self._summary is not None:
            if limited_count(self._summary) > self.settings.max_entries:
                raise LimitError(f"Memory store exceeds {self.settings.max_entries:,} entries.")
            if self._summary["bytes"] > self.settings.max_bytes:
                raise LimitError(
                    f"Memory store exceeds {self.settings.max_bytes // (1024 * 1024)} MiB."
                )
            self.write_json(layout.SUMMARY, self._summary)
        return dict(self.changes)
