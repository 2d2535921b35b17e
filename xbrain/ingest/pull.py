"""pull: page-atomic, resumable ingestion from a source adapter (reference §10.4).

Each page is fetched outside the store lock, then committed in one transaction with its
resources, capture hashes, queue entries and the source's progress — after checking
that no other pull advanced the same source meanwhile. Only a final page moves the
incremental checkpoint. Absence of an item never deletes anything; tombstones are never
resurrected.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..codec import digest
from ..core import Core, Transaction
from ..errors import InvalidInputError, XbrainError
from ..inputs import whole_number
from ..kinds import resource as resource_kind
from ..kinds import tombstone as tombstone_kind
from ..kinds.model import normalize_resource, resource_id
from ..timestamps import later_of
from .source import Page, SourceConfig, fetch
from .state import get_capture, get_pending, get_source, put_capture, put_pending, put_source

__all__ = ["pull"]

PENDING_NOTE = "Source fetched or changed; Agent distillation is pending."
STALE_REASON = "Source changed; inspect images again before relying on this analysis."
PAUSED = "Page budget reached. Repeat the same command to resume."
FAILED = "Committed pages are preserved; retry the same command. No missing item was deleted."
MAX_SEEN = 10_000


def _apply_page(
    core: Core, txn: Transaction, source: SourceConfig, page: Page, now: str
) -> dict[str, int]:
    from ..resources import apply_resources

    counts = {
        "received": len(page.items),
        "added": 0,
        "updated": 0,
        "unchanged": 0,
        "skippedDeleted": 0,
        "skippedOlder": 0,
    }
    queue = get_pending(txn)
    seen: dict[str, dict[str, Any]] = {}
    for item in page.items:
        rid = resource_id(source.provider, item["id"])
        content = {
            "provider": source.provider,
            "id": item["id"],
            "title": item["title"],
            "text": item["text"],
            "url": item["url"],
        }
        revision = digest(content)
        if rid in seen:
            if digest(seen[rid]) != digest(item):
                raise InvalidInputError("Conflicting duplicate source items; page not committed.")
            counts["unchanged"] += 1
            continue
        seen[rid] = item
        if tombstone_kind.get(txn, rid) is not None:
            counts["skippedDeleted"] += 1
            continue
        captured = get_capture(txn, rid)
        old = resource_kind.get(txn, rid)
        same = (
            old is not None
            and old["text"] == item["text"]
            and old["source"]["url"] == item["url"]
            and (captured is None or "title" not in captured or captured["title"] == item["title"])
        )
        if (
            captured
            and captured["updatedAt"]
            and item["updatedAt"]
            and item["updatedAt"] < captured["updatedAt"]
        ):
            counts["skippedOlder"] += 1
            continue
        if (
            captured
            and item["updatedAt"] is not None
            and captured["updatedAt"] == item["updatedAt"]
            and captured["revision"] != revision
            and not same
        ):
            raise InvalidInputError("Conflicting source version; page not committed.")
        if (captured and captured["revision"] == revision) or same:
            updated = (
                item["updatedAt"]
                if item["updatedAt"] is not None
                else (captured or {}).get("updatedAt")
            )
            put_capture(
                txn, rid, {"title": item["title"], "revision": revision, "updatedAt": updated}
            )
            if rid in queue:
                queue[rid] = {**queue[rid], "sourceRevision": revision}
            counts["unchanged"] += 1
            continue
        captured_title = captured.get("title") if captured else None
        limitations = list(old["limitations"]) if old else []
        if PENDING_NOTE not in limitations:
            limitations.append(PENDING_NOTE)
        raw: dict[str, Any] = {
            "source": {"provider": source.provider, "id": item["id"], "url": item["url"]},
            "title": old["title"] if old and old["title"] != captured_title else item["title"],
            "text": item["text"],
            "summary": old["summary"] if old else "",
            "purpose": old["purpose"] if old else "",
            "useWhen": old["useWhen"] if old else [],
            "limitations": limitations,
            "savedReason": old["savedReason"] if old else None,
            "updatedAt": later_of(now, old["updatedAt"]) if old else now,
        }
        if old and "design" in old:
            raw["design"] = {**old["design"], "status": "stale", "reason": STALE_REASON}
        result = apply_resources(txn, [normalize_resource(raw).resource])
        counts["added"] += result["added"]
        counts["updated"] += result["updated"]
        counts["unchanged"] += result["unchanged"]
        put_capture(
            txn, rid, {"title": item["title"], "revision": revision, "updatedAt": item["updatedAt"]}
        )
        queue[rid] = {"sourceKey": source.key, "sourceRevision": revision}
    put_pending(txn, queue)
    return counts


def pull(
    core: Core,
    source: SourceConfig,
    max_pages: int,
    restart: bool,
    now: Callable[[], str],
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Pull up to ``max_pages`` pages; ``complete``, ``paused`` or ``failed``."""
    whole_number(max_pages, 1, 100, "max-pages must be 1–100.")
    totals = {
        "pages": 0,
        "received": 0,
        "added": 0,
        "updated": 0,
        "unchanged": 0,
        "skippedDeleted": 0,
        "skippedOlder": 0,
    }
    coverage = "partial"

    def result(state: str, **extra: str) -> dict[str, Any]:
        return {
            "state": state,
            **totals,
            "coverage": coverage,
            "sourceKey": source.key,
            "remoteSync": "not_attempted",
            **extra,
        }

    for iteration in range(max_pages):
        try:
            before = _progress(core, source.key)
            if before and before.get("active") and not (restart and iteration == 0):
                progress_state = before
            else:
                progress_state = {
                    "generation": (before or {}).get("generation", 0),
                    "active": True,
                    "cursor": None,
                    "checkpoint": (before or {}).get("checkpoint"),
                    "seen": [],
                    "coverage": "full",
                }
            page = fetch(source, progress_state["cursor"], progress_state["checkpoint"])
            cursor = page.next_cursor
            if cursor is not None and (
                cursor == progress_state["cursor"] or digest(cursor) in progress_state["seen"]
            ):
                raise InvalidInputError("Repeated pagination cursor; page not committed.")
            with core.transaction("pull") as txn:
                current = get_source(txn, source.key)
                if digest(current) != digest(before):
                    raise InvalidInputError(
                        "Another pull advanced this source; retry from its committed progress."
                    )
                counts = _apply_page(core, txn, source, page, now())
                page_coverage = (
                    "partial"
                    if "partial" in (progress_state["coverage"], page.coverage)
                    else "full"
                )
                seen = (
                    [] if cursor is None else [*progress_state["seen"], digest(cursor)][-MAX_SEEN:]
                )
                put_source(
                    txn,
                    source.key,
                    {
                        "generation": (before or {}).get("generation", 0) + 1,
                        "active": cursor is not None,
                        "cursor": cursor,
                        "checkpoint": page.checkpoint
                        if cursor is None
                        else progress_state["checkpoint"],
                        "seen": seen,
                        "coverage": page_coverage,
                    },
                )
                txn.subject = (
                    f"pull: {source.provider} page {iteration + 1}: {counts['added']} added, "
                    f"{counts['updated']} updated, {counts['unchanged']} unchanged"
                )
        except XbrainError as exc:
            return result("failed", error=exc.message, note=FAILED)
        coverage = page_coverage
        totals["pages"] += 1
        for name in ("received", "added", "updated", "unchanged", "skippedDeleted", "skippedOlder"):
            totals[name] += counts[name]
        if progress is not None:
            progress(1, max_pages)
        if cursor is None:
            return result("complete")
    return result("paused", note=PAUSED)


def _progress(core: Core, key: str) -> dict[str, Any] | None:
    """The committed progress of a source (None when there is no store yet)."""
    with core.reading() as view:
        return None if view is None else get_source(view, key)
