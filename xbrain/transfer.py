"""Import from and export to the original single-file JSON store, losslessly.

Import fills an empty store in one commit (objects go into one pack); export writes every
resource, tombstone, receipt and ingestion record back in the original's format. The
original format holds nothing else: export counts what it leaves out (skills, and every
record kind the registry does not mark as the original's: entries, entry tombstones) in
``omitted``, for a full backup (``backup create``, a remote) to hold.
Resource order on export is by ``updatedAt`` then id (tombstones by ``deletedAt``): the
original's "last write last" order is not recorded in git and carries no meaning.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from .core import Core, StoreConfig, Transaction, View, layout
from .core.registry import record_kinds
from .errors import ConflictError, InvalidInputError, NotFoundError
from .kinds import resource as resource_kind
from .kinds import skill as skill_kind
from .kinds import state
from .kinds import tombstone as tombstone_kind
from .kinds.jsonstore import OriginalStore, read_original, write_original
from .kinds.model import Resource

__all__ = ["collect", "fill", "omitted"]


def _counts(data: OriginalStore) -> dict[str, int]:
    return {
        "resources": len(data.resources),
        "tombstones": len(data.tombstones),
        "receipts": len(data.receipts),
        "sources": len(data.ingestion["sources"]),
        "captures": len(data.ingestion["captures"]),
        "pending": len(data.ingestion["pending"]),
    }


def is_empty(view: View) -> bool:
    """True when a store holds no records and no state."""
    totals = view.summary()
    if totals["resources"] or totals["tombstones"]:
        return False
    return (
        not any(
            view.snap.listdir(directory)
            for directory in (state.RECEIPTS_DIR, state.SOURCES_DIR, state.CAPTURES_DIR)
        )
        and view.read(state.PENDING) is None
    )


def load(path: Path, config: StoreConfig) -> OriginalStore:
    """Read and validate the file to import (before any lock is taken)."""
    return read_original(path, max_bytes=config.max_bytes, max_entries=config.max_entries)


def fill(txn: Transaction, data: OriginalStore) -> dict[str, Any]:
    """Stage the whole original store into an empty transaction."""
    if not is_empty(txn):
        raise ConflictError(
            "Import needs an empty store; choose a new --store directory for the import."
        )
    for resource in data.resources:
        resource_kind.put(txn, resource)
    for tombstone in data.tombstones:
        tombstone_kind.put(txn, tombstone)
    for key, bucket in data.receipts.items():
        txn.write_json(state.receipts_path(key), bucket)
    for key, progress in data.ingestion["sources"].items():
        txn.write_json(state.source_path(key), progress)
    shards: dict[str, dict[str, Any]] = {}
    for rid, capture in data.ingestion["captures"].items():
        shards.setdefault(layout.shard(rid), {})[rid] = capture
    for shard, entries in shards.items():
        txn.write(state.captures_path(shard), layout.dump_catalog(entries))
    if data.ingestion["pending"]:
        txn.write_json(state.PENDING, data.ingestion["pending"])
    txn.subject = (
        f"import-store: {len(data.resources)} resources, {len(data.tombstones)} tombstones"
    )
    return _counts(data)


def _json_files(view: View, directory: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in sorted(view.snap.listdir(directory)):
        if name.endswith(".json"):
            out[name.removesuffix(".json")] = view.read_json(f"{directory}/{name}", {})
    return out


def collect(view: View) -> OriginalStore:
    """Read every record and state file of a commit into the original's shape."""
    data = OriginalStore()
    resources, tombstones = [], []
    for path, _ in view.snap.files(resource_kind.DIRECTORY):
        resource = resource_kind.get(view, Path(path).stem)
        if resource is not None:
            resources.append(resource)
    for path, _ in view.snap.files(tombstone_kind.DIRECTORY):
        tombstone = tombstone_kind.get(view, Path(path).stem)
        if tombstone is not None:
            tombstones.append(tombstone)
    data.resources = sorted(resources, key=lambda r: (r["updatedAt"], r["id"]))
    data.tombstones = sorted(tombstones, key=lambda t: (t["deletedAt"], t["id"]))
    data.receipts = _json_files(view, state.RECEIPTS_DIR)
    captures: dict[str, Any] = {}
    for shard in _json_files(view, state.CAPTURES_DIR).values():
        captures.update(shard)
    data.ingestion = {
        "sources": _json_files(view, state.SOURCES_DIR),
        "captures": dict(sorted(captures.items())),
        "pending": view.read_json(state.PENDING, {}),
    }
    return data


def export(view: View | None, target: Path) -> dict[str, Any]:
    """Write ``view`` (None: an empty store) to ``target`` in the original format."""
    if target.is_dir():
        raise InvalidInputError(f"Export target is a directory: {target}")
    if view is None:
        raise NotFoundError("No store to export.")
    data = collect(view)
    size = write_original(target, data)
    return {
        "exported": str(target),
        **_counts(data),
        "bytes": size,
        "omitted": omitted(view),
        "commit": view.snap.commit,
    }


def omitted(view: View) -> dict[str, int]:
    """What the original format cannot hold, counted: skills, then each other record
    kind by its summary key (``entries``, ``entryTombstones``)."""
    totals = view.summary()
    out = {"skills": len(skill_kind.slugs(view))}
    for spec in record_kinds():
        if not spec.original:
            out[spec.summary_key] = totals.get(spec.summary_key, 0)
    return out


def import_store(
    core: Core, file: Path, imported: Callable[[str, list[Resource]], None] | None = None
) -> dict[str, Any]:
    """Fill an empty store from an original single-file JSON store.

    ``imported(commit, resources)``, when given, hears about the live resources the
    commit now holds (already parsed: the search index is built from them).
    """
    with core.reading() as view:  # a store may have raised its limits
        config = view.config() if view is not None else StoreConfig()
    data = load(Path(file), config)
    with core.transaction("import-store") as txn:
        counts = fill(txn, data)
    if imported is not None and txn.commit_id is not None:
        imported(txn.commit_id, data.resources)
    return {"imported": str(Path(file).absolute()), **counts, "commit": txn.commit_id}


def export_store(core: Core, file: Path, *, force: bool = False) -> dict[str, Any]:
    """Write the whole store as an original single-file JSON store."""
    target = core.export_target(Path(file), force)
    with core.reading() as view:
        return export(view, target)
