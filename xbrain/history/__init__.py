"""History of the store and of one resource: log, show, diff, restore.

Reads go through the core's repository; ``restore`` writes the past content as a new
revision in one core transaction (history itself is never rewritten).
"""

from __future__ import annotations

from typing import Any

from ..core import CommitId, Core, GitStore, View, private_umask
from ..errors import ConflictError, CorruptStoreError, InvalidInputError, NotFoundError, UsageError
from ..kinds import resource as resource_kind
from ..kinds import tombstone as tombstone_kind
from ..timestamps import later_of
from .table import diff as diff_views
from .table import log as log_commits

__all__ = ["diff", "log", "restore", "show"]


def log(core: Core, rid: str | None = None, limit: int = 20) -> dict[str, Any]:
    """Commits (newest first) of the store, or those that changed one resource."""
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 1000:
        raise InvalidInputError("limit must be 1–1,000.")
    if rid is not None and not resource_kind.is_id(rid):
        raise InvalidInputError("Invalid resource ID; expected resource_ and 64 hex digits.")
    with core.reading() as view:
        if view is None:
            return {"id": rid, "commits": []}
        with core.git() as git, private_umask():
            return {"id": rid, "commits": log_commits(git, rid, limit)}


def show(core: Core, rid: str, at: str) -> dict[str, Any]:
    """A resource (or its tombstone) as of revision ``at``."""
    with core.reading() as view:
        if view is None:
            raise NotFoundError(f"Unknown revision: {at}")
        with core.git() as git:
            past = View(git.snapshot(git.resolve(at)))
            resource = resource_kind.get(past, rid) if resource_kind.is_id(rid) else None
            tombstone = (
                tombstone_kind.get(past, rid)
                if resource_kind.is_id(rid) and resource is None
                else None
            )
            commit = past.snap.commit
    if resource is None and tombstone is None:
        raise NotFoundError(f"Resource not found at {at}.")
    state = {"resource": resource} if resource is not None else {"tombstone": tombstone}
    return {"id": rid, "commit": commit, "state": "live" if resource else "deleted", **state}


def diff(core: Core, rid: str, old: str | None = None, new: str | None = None) -> dict[str, Any]:
    """How a resource changed between two revisions (default: its last change)."""
    if not resource_kind.is_id(rid):
        raise InvalidInputError("Invalid resource ID; expected resource_ and 64 hex digits.")
    with core.reading() as view:
        if view is None:
            raise NotFoundError("Resource not found.")
        with core.git() as git, private_umask():
            to: CommitId | None = git.resolve(new) if new is not None else git.head()
            since: CommitId | None
            if old is not None:
                since = git.resolve(old)
            else:
                changes = log_commits(git, rid, 1) if new is None else []
                if new is not None or not changes:
                    raise UsageError("Give the revision to compare with (xbrain diff ID REV).")
                to = changes[0]["commit"]
                since = _changed_side(git, rid, to, changes[0]["parents"])
            return diff_views(View(git.snapshot(since)), View(git.snapshot(to)), rid)


def restore(core: Core, rid: str, at: str) -> dict[str, Any]:
    """Write a resource's content as of ``at`` as a new revision (history untouched)."""
    past = show(core, rid, at)
    if past["state"] != "live":
        raise ConflictError(f"The resource was deleted at {at}; nothing to restore.")
    with core.transaction("restore") as txn:
        try:
            current = resource_kind.get(txn, rid)
        except CorruptStoreError:  # a damaged copy (a plain git commit): this puts it right
            current = None
        deleted = tombstone_kind.get(txn, rid)
        after = max(
            (r for r in (current and current["updatedAt"], deleted and deleted["deletedAt"]) if r),
            default=past["resource"]["updatedAt"],
        )
        restored = {**past["resource"], "updatedAt": later_of(core.clock(), after)}
        if current is not None and {**current, "updatedAt": ""} == {
            **restored,
            "updatedAt": "",
        }:
            return {"restored": False, "id": rid, "from": past["commit"], "commit": None}
        resource_kind.put(txn, restored)
        txn.actions.append(("restore", rid, restored["title"]))
        txn.subject = f"restore: {rid} from {str(past['commit'])[:12]}"
    return {"restored": True, "id": rid, "from": past["commit"], "commit": txn.commit_id}


def _changed_side(git: GitStore, rid: str, commit: CommitId, parents: list[str]) -> CommitId | None:
    """The parent to compare ``commit`` with for ``rid``: the first one that differs.

    For a merge that kept this device's revision, that is the other device's side, so
    ``diff`` shows what the merge did to the resource rather than nothing.
    """
    path_of = {"resource": resource_kind.path(rid), "tombstone": tombstone_kind.path(rid)}
    now = git.snapshot(commit)
    state = tuple(now.blob_id(path) for path in path_of.values())
    for parent in parents:
        snap = git.snapshot(CommitId(parent))
        if tuple(snap.blob_id(path) for path in path_of.values()) != state:
            return CommitId(parent)
    return CommitId(parents[0]) if parents else None
