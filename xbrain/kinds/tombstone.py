"""The tombstone kind: ``{id, deletedAt}`` where a resource was deleted.

``tombstones/<aa>/<id>.yaml``; putting one removes the live resource of the same id (and
so its URL-index line). The catalog line carries ``deletedAt``.
"""

from __future__ import annotations

from typing import Any

from ..codec import dump_yaml
from ..core.registry import RecordKind, register
from ..core.view import Transaction, View
from .model import parse_record

__all__ = ["DIRECTORY", "KIND", "get", "put"]

DIRECTORY = "tombstones"


def _parse(data: bytes) -> dict[str, Any]:
    return parse_record("tombstone", data)


KIND = RecordKind(
    name="tombstone",
    directory=DIRECTORY,
    id_prefix="resource_",
    max_bytes=4 << 10,
    parse=_parse,
    serialize=dump_yaml,
    catalog_fields=lambda record: {"deletedAt": record["deletedAt"]},
    summary_key="tombstones",
    schema="tombstone",
    always_counted=True,
    siblings=("resource",),
    clock="deletedAt",
    tombstone=True,
    limited=True,
    original=True,
)
register(KIND)


def path(rid: str) -> str:
    """``tombstones/<aa>/<id>.yaml``."""
    return KIND.path(rid)


def get(view: View, rid: str) -> dict[str, str] | None:
    """A tombstone ``{id, deletedAt}``, or None."""
    record = view.record("tombstone", rid)
    return None if record is None else {"id": record["id"], "deletedAt": record["deletedAt"]}


def put(txn: Transaction, tombstone: dict[str, str]) -> None:
    """Stage a tombstone, removing the live resource of the same id."""
    txn.put_record("tombstone", tombstone)
