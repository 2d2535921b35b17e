"""capture: turn a gallery bookmark library into ``provider: x`` resources (reference §5).

Existing distillation (summary, purpose, useWhen, limitations, savedReason) and titles
are kept; the text is refreshed, and a changed text is flagged for review; ``updatedAt``
moves only when something changed; tombstoned ids are skipped; images become an
unanalyzed design, or mark an analyzed one stale when new images appear. Beyond the
original, a row that cannot become a valid resource fails the capture naming the
bookmark (or, with ``skip_invalid``, is reported and left out).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..codec import digest
from ..core import Transaction
from ..errors import InvalidInputError, XbrainError
from ..kinds import resource as resource_kind
from ..kinds import tombstone as tombstone_kind
from ..kinds.model import Resource, normalize_resource, resource_id
from ..timestamps import later_of
from .bookmarks import Bookmark, js_slice

__all__ = ["capture", "captured_design", "check_rows"]

REVIEW = "Source text changed; review previous distillation before use."
UNANALYZED = "Captured source images have not been visually inspected."
IMAGES_CHANGED = "Source images changed; inspect the current originals before use."


def captured_design(
    old: dict[str, Any] | None, media: tuple[dict[str, str], ...]
) -> dict[str, Any] | None:
    """The original's ``capturedDesign`` (reference §7.4)."""
    urls: list[str] = []
    for item in media:
        if item["type"] == "image" and item["url"] not in urls:
            urls.append(item["url"])
    urls = urls[:12]
    if not urls:
        return old
    if old is None:
        return {
            "status": "unanalyzed",
            "images": [{"url": url, "observed": False} for url in urls],
            "domains": [],
            "features": [],
            "styles": [],
            "analyzedAt": None,
            "reason": UNANALYZED,
        }
    known = {image["url"] for image in old["images"]}
    fresh = [url for url in urls if url not in known]
    if not fresh:
        return old
    images = [*old["images"], *({"url": url, "observed": False} for url in fresh)][:12]
    status = "unanalyzed" if old["status"] == "unanalyzed" else "stale"
    return {**old, "status": status, "images": images, "reason": IMAGES_CHANGED}


def _resource(bookmark: Bookmark, old: Resource | None, now: str) -> Resource:
    raw: dict[str, Any] = {
        "source": {"provider": "x", "id": bookmark.id, "url": bookmark.url},
        "title": old["title"] if old else js_slice(bookmark.text, 120),
        "text": bookmark.text,
        "summary": old["summary"] if old else bookmark.summary,
        "purpose": old["purpose"] if old else "",
        "useWhen": old["useWhen"] if old else [],
        "limitations": list(old["limitations"]) if old else [],
        "savedReason": old["savedReason"] if old else None,
        "updatedAt": old["updatedAt"] if old else now,
    }
    design = captured_design(old.get("design") if old else None, bookmark.media)
    if design is not None:
        raw["design"] = design
    new = normalize_resource(raw).resource
    if old is not None and old["text"] != new["text"] and REVIEW not in new["limitations"]:
        new["limitations"].append(REVIEW)
        new = normalize_resource(new).resource
    if old is not None and digest(new) != digest(old):
        new["updatedAt"] = later_of(now, old["updatedAt"])
    return new


def check_rows(bookmarks: list[Bookmark], now: str) -> None:
    """Validate every row as a first capture would (no store yet: nothing is old)."""
    for bookmark in bookmarks:
        try:
            _resource(bookmark, None, now)
        except XbrainError as exc:
            raise InvalidInputError(f"Bookmark {bookmark.id}: {exc.message}") from exc


def capture(
    txn: Transaction,
    bookmarks: list[Bookmark],
    now: str,
    apply: Callable[[Transaction, list[Resource]], dict[str, Any]],
    *,
    skip_invalid: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Stage the capture of ``bookmarks`` (one transaction, one commit).

    ``progress(step, total)`` is called once per bookmark.
    """
    resources: list[Resource] = []
    invalid: list[dict[str, str]] = []
    skipped = 0
    for bookmark in bookmarks:
        if progress is not None:
            progress(1, len(bookmarks))
        rid = resource_id("x", bookmark.id)
        if tombstone_kind.get(txn, rid) is not None:
            skipped += 1
            continue
        try:
            resources.append(_resource(bookmark, resource_kind.get(txn, rid), now))
        except XbrainError as exc:
            if not skip_invalid:
                raise InvalidInputError(f"Bookmark {bookmark.id}: {exc.message}") from exc
            invalid.append({"bookmarkId": bookmark.id, "error": exc.message})
    result = apply(txn, resources)
    result["skippedDeleted"] = skipped
    if skip_invalid:
        result["invalid"] = invalid
    txn.subject = f"capture: {result['added']} added, {result['updated']} updated"
    return result
