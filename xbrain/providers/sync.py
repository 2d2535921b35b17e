"""sync and provider-aware status: receipts in git, confirmations only from the provider.

``sync`` walks resources then tombstones (each in id order) under the store lock — the
kinds the registry marks as the original store's; skills and entries are never sent. An
entry whose receipt already equals its revision is skipped; one queued for distillation
is held back; every other is sent, and only a confirmed send records a receipt. Receipts
(``receipts/<providerKey>.json``) are committed every 100 confirmations, at the end and
on failure, so a crash replays at most that many calls. Commit messages name the
provider kind, a key prefix and counts — never content.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..core import Core, GitStore, Transaction, View
from ..core.registry import original_kinds
from ..errors import NotFoundError, UsageError, XbrainError
from ..kinds import resource as resource_kind
from ..kinds import state as state_files

if TYPE_CHECKING:
    from . import Provider

__all__ = ["provider_status", "status", "sync", "sync_selection"]

CHECKPOINT = 100
NOTE = (
    "Local data remains usable. Receipts record past acknowledgements, "
    "not a live remote health check."
)


def _entries(view: View) -> list[tuple[str, str, str]]:
    """(id, revision, kind) of every record a provider is sent: the original store's kinds
    (resources, then tombstones, each in id order). Skills, entries and their tombstones
    stay in the store: the provider protocol is for resources."""
    sent = {spec.directory: spec for spec in original_kinds()}
    rows = []
    for rid, entry in view.catalog().items():
        spec = sent.get(entry["path"].split("/", 1)[0])
        if spec is not None:
            rows.append((spec.tombstone, rid, entry["revision"]))
    rows.sort()
    return [(rid, revision, "tombstone" if dead else "resource") for dead, rid, revision in rows]


def provider_status(view: View | None, provider: Provider) -> dict[str, Any]:
    """status against one provider's receipts."""
    entries = _entries(view) if view is not None else []
    receipts: dict[str, str] = (
        view.read_json(state_files.receipts_path(provider.key), {}) if view is not None else {}
    )
    pending = sum(1 for rid, revision, _ in entries if receipts.get(rid) != revision)
    return {
        "provider": provider.kind,
        "pending": pending,
        "remoteSync": "pending" if pending else "last_sync_confirmed",
        "note": NOTE,
    }


def _checkpoint(
    core: Core,
    git: GitStore,
    provider: Provider,
    receipts: dict[str, str],
    counts: dict[str, int],
    final: bool,
) -> None:
    txn: Transaction = core.begin(git, "sync")
    path = state_files.receipts_path(provider.key)
    if receipts or final:  # the bucket exists after any sync, even with nothing confirmed
        txn.write_json(path, receipts)
    txn.subject = (
        f"sync: {provider.kind} provider {provider.key[:12]}: "
        f"{counts['confirmed']} confirmed, {counts['failed']} failed"
        + ("" if final else " (checkpoint)")
    )
    core.commit(git, txn)


def sync(core: Core, provider: Provider, rid: str | None) -> dict[str, Any]:
    """Send the selection (one id, or everything) to ``provider``."""
    counts = {"confirmed": 0, "failed": 0}
    failures: list[dict[str, str]] = []
    unchanged = skipped = 0
    with core.session() as git:
        view = View(git.snapshot())
        entries = _entries(view)
        if rid is not None:
            entries = [e for e in entries if e[0] == rid]
            if not entries:
                raise NotFoundError("Resource not found.")
        receipts: dict[str, str] = dict(view.read_json(state_files.receipts_path(provider.key), {}))
        queued = view.read_json(state_files.PENDING, {})
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
                        resource = resource_kind.get(view, entry_id)
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
                    _checkpoint(core, git, provider, receipts, counts, final=False)
                    since = 0
        finally:
            _checkpoint(core, git, provider, receipts, counts, final=True)
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


def sync_selection(
    core: Core, provider: Provider | None, rid: str | None = None, everything: bool = False
) -> dict[str, Any]:
    """Send resources and deletions to ``provider`` (one id, or ``everything``)."""
    if provider is None:
        raise UsageError(
            "Memory provider not configured; resources remain local and unsynced. "
            "Select a personal provider explicitly."
        )
    if (rid is None) == (not everything):
        raise UsageError("Select exactly one of --id RESOURCE_ID or --all.")
    if not core.exists():
        core.check_dir()
        if rid is not None:
            raise NotFoundError("Resource not found.")
    return sync(core, provider, rid)


def status(
    core: Core,
    provider: Provider | None = None,
    inventory: Callable[[View | None], dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Counts and sync state (no provider: ``not_configured``).

    ``pending`` counts what a provider would be sent (``pendingKinds``): without one,
    every resource and tombstone, as the original did. ``inventory``, when given, adds
    the counts of the other kinds from the same commit (the facade hands it in).
    """
    with core.reading() as view:
        summary = {"resources": 0, "tombstones": 0}
        pending: dict[str, Any] = {}
        resumable = 0
        head = None
        if view is not None:
            view.require_derived()  # counts from a catalog that is gone would read 0
            summary = view.summary()
            pending = view.read_json(state_files.PENDING, {})
            for name in view.snap.listdir(state_files.SOURCES_DIR):
                progress = view.read_json(f"{state_files.SOURCES_DIR}/{name}", {})
                resumable += progress.get("active") is True
            head = view.snap.commit
        remote = None
        if provider is not None:
            remote = provider_status(view, provider)
        others = inventory(view) if inventory is not None else {}
    sent = original_kinds()
    result = {
        "store": str(core.path),
        "exists": core.exists(),
        "resources": summary["resources"],
        "tombstones": summary["tombstones"],
        "pendingDistillation": len(pending),
        "resumableSources": resumable,
        "provider": None,
        "pending": sum(summary.get(spec.summary_key, 0) for spec in sent),
        "pendingKinds": [spec.name for spec in sent],
        "remoteSync": "not_configured",
        "note": NOTE,
    }
    return {**result, **(remote or {}), **others, "commit": head}
