"""What records imply: catalog lines, summary totals and every kind's derived files.

One derivation shared by writes (``Transaction``), merges and ``doctor``, so the catalog,
the summary and the derived indexes can never drift apart between them.
"""

from __future__ import annotations

from typing import Any

from ..codec import canonical_json, sha256_hex
from . import layout
from .registry import RecordKind, record_kind, record_kinds
from .shards import shard_files

__all__ = [
    "catalog_entry",
    "count_change",
    "derived_files",
    "empty_summary",
    "ordered",
    "record_bytes",
]


def record_bytes(record: dict[str, Any]) -> int:
    """A record's size as the original single-file store would hold it."""
    return len(canonical_json(record).encode())


def catalog_entry(kind: str | RecordKind, record: dict[str, Any]) -> dict[str, Any]:
    """The catalog line of one record."""
    spec = record_kind(kind) if isinstance(kind, str) else kind
    encoded = canonical_json(record).encode()  # its digest and its size: one encoding
    entry: dict[str, Any] = {"path": spec.path(record["id"]), "revision": sha256_hex(encoded)}
    entry.update(spec.catalog_fields(record))
    entry["bytes"] = len(encoded)
    return entry


def empty_summary() -> dict[str, int]:
    """Totals of a store without records: the always-counted kinds, then bytes.

    Other kinds' counts appear with their first record (so a store written before a
    kind existed keeps a valid summary).
    """
    totals = {spec.summary_key: 0 for spec in record_kinds() if spec.always_counted}
    totals["bytes"] = 0
    return totals


def entry_kind(entry: dict[str, Any]) -> RecordKind:
    """The record kind a catalog entry belongs to (by its path's directory)."""
    directory = entry["path"].split("/", 1)[0]
    return next(spec for spec in record_kinds() if spec.directory == directory)


def count_change(totals: dict[str, int], old: dict[str, Any] | None, new: Any) -> None:
    """Move summary ``totals`` from catalog entry ``old`` to ``new`` (either may be None)."""
    for item, sign in ((old, -1), (new, 1)):
        if item is not None:
            spec = entry_kind(item)
            key = spec.summary_key
            totals[key] = totals.get(key, 0) + sign
            if not totals[key] and not spec.always_counted:
                del totals[key]
            totals["bytes"] += sign * item["bytes"]
    in_order = ordered(totals)
    totals.clear()
    totals.update(in_order)


def ordered(totals: dict[str, int]) -> dict[str, int]:
    """A summary's one order of keys: the always-counted kinds, the other kinds in
    registration order, then ``bytes`` last, as it has always been written. Whatever
    order records arrive in (a write, a merge, a clone, doctor), the bytes agree, and
    doctor compares bytes."""
    kinds = sorted(record_kinds(), key=lambda spec: not spec.always_counted)  # stable
    out = {
        spec.summary_key: totals[spec.summary_key] for spec in kinds if spec.summary_key in totals
    }
    out.update((key, value) for key, value in totals.items() if key not in out and key != "bytes")
    out["bytes"] = totals["bytes"]
    return out


def derived_files(
    entries: dict[str, dict[str, Any]], live: dict[str, dict[str, dict[str, Any]]]
) -> dict[str, bytes]:
    """The catalog shards, summary and derived files that records imply.

    ``entries``: id → catalog entry of every record; ``live``: kind → id → record of the
    records that feed derived files (at least those of kinds that declare some).
    """
    summary = empty_summary()
    for entry in entries.values():
        count_change(summary, None, entry)
    out = shard_files(layout.CATALOG_DIR, entries, layout.id_digits, len(entries))
    out[layout.SUMMARY] = layout.dump_json(summary)
    for spec in record_kinds():
        for derived in spec.derived:
            out.update(derived.derive(live.get(spec.name, {})))
    return out
