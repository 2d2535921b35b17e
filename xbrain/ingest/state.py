"""Reading and staging ingestion state inside a transaction."""

from __future__ import annotations

from typing import Any

from ..core import Transaction, View, layout
from ..kinds import state

__all__ = ["get_capture", "get_pending", "get_source", "put_capture", "put_pending", "put_source"]


def get_source(view: View, key: str) -> dict[str, Any] | None:
    """Pull progress of one source, or None."""
    value: dict[str, Any] | None = view.read_json(state.source_path(key), None)
    return value


def put_source(txn: Transaction, key: str, progress: dict[str, Any]) -> None:
    """Stage pull progress."""
    txn.write_json(state.source_path(key), progress)


def get_capture(view: View, rid: str) -> dict[str, Any] | None:
    """What a resource was last captured from, or None."""
    shard: dict[str, Any] = view.read_json(state.captures_path(layout.shard(rid)), {})
    value: dict[str, Any] | None = shard.get(rid)
    return value


def put_capture(txn: Transaction, rid: str, entry: dict[str, Any]) -> None:
    """Stage one capture entry (key order: title, revision, updatedAt)."""
    path = state.captures_path(layout.shard(rid))
    shard = txn.read_json(path, {})
    shard[rid] = entry
    txn.write(path, layout.dump_catalog(shard))


def get_pending(view: View) -> dict[str, dict[str, str]]:
    """The distillation queue, in queue order."""
    queue: dict[str, dict[str, str]] = view.read_json(state.PENDING, {})
    return queue


def put_pending(txn: Transaction, queue: dict[str, dict[str, str]]) -> None:
    """Stage the queue (an empty queue removes the file)."""
    if queue:
        txn.write_json(state.PENDING, queue)
    else:
        txn.write(state.PENDING, None)
