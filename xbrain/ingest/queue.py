"""The distillation queue: ``pending`` lists it, ``distill`` answers it (reference §10.5).

A distillation replaces exactly summary, purpose, useWhen and limitations of a queued
resource, guarded twice: the source revision it was queued for and the resource's
revision read from ``pending``. One stale entry rejects the whole batch. Identity,
title, text, source, savedReason and design cannot be changed this way.
"""

from __future__ import annotations

from typing import Any

from ..codec import digest
from ..core import Transaction, View
from ..errors import InvalidInputError, StaleError
from ..inputs import whole_number
from ..kinds import resource as resource_kind
from ..kinds.model import normalize_resource
from ..timestamps import later_of
from .state import get_pending, put_pending

__all__ = ["distill", "pending"]

STALE = "Stale distillation; re-read pending resources before updating."


def pending(view: View | None, limit: int) -> dict[str, Any]:
    """The queue: how many queued resources exist, and the first ``limit`` of them."""
    whole_number(limit, 1, 100, "limit must be 1–100.")
    items: list[dict[str, Any]] = []
    count = 0
    for rid, entry in (get_pending(view) if view is not None else {}).items():
        resource = resource_kind.get(view, rid) if view is not None else None
        if resource is None:
            continue
        count += 1
        if len(items) < limit:
            items.append(
                {
                    "id": rid,
                    "sourceRevision": entry["sourceRevision"],
                    "resourceRevision": digest(resource),
                    "resource": resource,
                }
            )
    return {"pending": count, "items": items}


def distill(txn: Transaction, entries: Any, now: str) -> dict[str, Any]:
    """Apply 1–100 distillations as one all-or-nothing batch."""
    from ..resources import apply_resources

    batch = entries if isinstance(entries, list) else [entries]
    if not 1 <= len(batch) <= 100:
        raise InvalidInputError("Distill 1–100 resources at a time.")
    queue = get_pending(txn)
    seen: set[str] = set()
    updated = []
    for entry in batch:
        if (
            not isinstance(entry, dict)
            or not isinstance(entry.get("id"), str)
            or entry["id"] in seen
        ):
            raise InvalidInputError("Invalid or duplicate distillation item.")
        seen.add(entry["id"])
        queued = queue.get(entry["id"])
        current = resource_kind.get(txn, entry["id"])
        if (
            queued is None
            or current is None
            or entry.get("sourceRevision") != queued["sourceRevision"]
            or entry.get("resourceRevision") != digest(current)
        ):
            raise StaleError(STALE)
        raw = {
            **current,
            "summary": entry.get("summary"),
            "purpose": entry.get("purpose"),
            "useWhen": entry.get("useWhen"),
            "limitations": entry.get("limitations"),
            "updatedAt": later_of(now, current["updatedAt"]),
        }
        updated.append(normalize_resource(raw).resource)
    apply_resources(txn, updated)
    for resource in updated:
        del queue[resource["id"]]
    put_pending(txn, queue)
    txn.subject = f"distill: {len(updated)} resources"
    return {"distilled": len(updated), "pending": len(queue), "remoteSync": "not_attempted"}
