"""sync and provider-aware status: receipts in git, confirmations only from the provider.

``sync`` walks resources then tombstones (each in id order) under the store lock. An
entry whose receipt already equals its revision is skipped; one queued for distillation
is held back; every other is sent, and only a confirmed send records a receipt. Receipts
(``receipts/<providerKey>.json``) are committed every 100 confirmations, at the end and
on failure, so a crash replays at most that many calls. Commit messages name the
provider kind, a key prefix and counts — never content.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import layout
from ..errors import NotFoundError, XbrainError
from ..view import Transaction, View

if TYPE_CHECKING:
    from ..git import GitStore
    from ..store import Store
    from . import Provider

__all__ = ["provider_status", "sync"]

CHECKPOINT = 100
NOTE = (
    "Local data remains usable. Receipts record past acknowledgements, "
    "not a live remote health check."
)


def _entries(view: View) -> list[tuple[str, str, str]]:
    """(id, revision, kind) of every resource, then every tombstone, in id order."""
    catalog = view.catalog()
    rows = sorted(
        (rid, e["revision"], "resource" if e["path"].startswith("resources/") else "tombstone")
        for rid, e in catalog.items()
    )
    return [r for r in rows if r[2] == "resource"] + [r for r in rows if r[2] == "tombstone"]


def provider_status(view: View | None, provider: Provider) -> dict[str, Any]:
    """status against one provider's receipts."""
    entries = _entries(view) if view is not None else []
    receipts: dict[str, str] = (
        view.read_json(layout.receipts_path(provider.key), {}) if view is not None else {}
    )
    pending = sum(1 for rid, revision, _ in entries if receipts.get(rid) != revision)
    return {
        "provider": provider.kind,
        "pending": pending,
        "remoteSync": "pending" if pending else "last_sync_confirmed",
        "note": NOTE,
    }


def _checkpoint(
    store: Store,
    git: GitStore,
    provider: Provider,
    receipts: dict[str, str],
    counts: dict[str, int],
    final: bool,
) -> None:
    txn: Transaction = store._begin(git, "sync")
    path = layout.receipts_path(provider.key)
    if receipts or final:  # the bucket exists after any sync, even with nothing confirmed
        txn.write_json(path, receipts)
    txn.subject = (
        f"sync: {provider.kind} provider {provider.key[:12]}: "
        f"{counts['confirmed']} confirmed, {counts['failed']} failed"
        + ("" if final else " (checkpoint)")
    )
    store._commit(git, txn)


def sync(store: Store, provider: Provider, rid: str | None) -> dict[str, Any]:
    """Send the selection (one id, or everything) to ``provider``."""
    counts = {"confirmed": 0, "failed": 0}
    failures: list[dict[str, str]] = []
    unchanged = skipped = 0
    with store._session() as git:
        view = View(git.snapshot())
        entries = _entries(view)
        if rid is not None:
            entries = [e for e in entries if e[0] == rid]
            if not entries:
                raise NotFoundError("Resource not found.")
        receipts: dict[str, str] = dict(view.read_json(layout.receipts_path(provider.key), {}))
        queued = view.read_json(layout.PENDING, {})
        since = 0
        try:
            for entry_id, revision, kind in entries:
                if kind == "resource" and entry_id in queued:
                    skipped += 1
                    continue
                if receipts.get(entry_id) == revision:
                    unchanged += 1
                    continue
                try:
                    if kind == "resource":
                        resource = view.resource(entry_id)
                        assert resource is not None
                        provider.upsert(resource, revision)
                    else:
                        provider.delete(entry_id, revision)
                except XbrainError as exc:
                    failures.append({"id": entry_id, "error": exc.message})
                    counts["failed"] += 1
                    continue
                except OSError as exc:
                    failures.append({"id": entry_id, "error": str(exc.strerror or exc)})
                    counts["failed"] += 1
                    continue
                receipts[entry_id] = revision
                counts["confirmed"] += 1
                since += 1
                if since >= CHECKPOINT:
                    _checkpoint(store, git, provider, receipts, counts, final=False)
                    since = 0
        finally:
            _checkpoint(store, git, provider, receipts, counts, final=True)
    if skipped:
        state = "blocked_pending_distillation"
    elif failures:
        state = "incomplete"
    else:
        state = "confirmed_for_selection"
    return {
        "provider": provider.kind,
        "confirmed": counts["confirmed"],
        "unchanged": unchanged,
        "failures": failures,
        "skippedPending": skipped,
        "remoteSync": state,
    }
