"""History of the store and of one record — a resource or an entry: log, show, diff,
restore.

Reads go through the core's repository; ``restore`` writes the past content as a new
revision in one core transaction (history itself is never rewritten). A record's kind
comes from its id (``resource_…`` or ``entry_…``), and its tombstone from the kind's
sibling in the registry. Skills keep their own history (``xbrain skill log``).
"""

from __future__ import annotations

from typing import Any

from ..core import CommitId, Core, GitStore, View, private_umask
from ..core.registry import record_kind
from ..errors import ConflictError, CorruptStoreError, InvalidInputError, NotFoundError, UsageError
from ..inputs import whole_number
from ..kinds import entry as _entry  # noqa: F401  (registers the entry kinds)
from ..kinds import resource as _resource  # noqa: F401  (registers the resource kinds)
from ..timestamps import later_of
from .table import Kinds
from .table import diff as diff_views
from .table import log as log_commits

__all__ = ["diff", "log", "restore", "show"]

HISTORY_KINDS = ("resource", "entry")


def _kinds(rid: object) -> Kinds:
    """The kind of record ``rid`` names, and its tombstone's; a bad id is exit 4."""
    for name in HISTORY_KINDS:
        spec = record_kind(name)
        if spec.is_id(rid):
            return Kinds(name, spec.siblings[0])
    raise InvalidInputError("Invalid ID; expected resource_ or entry_ and 64 hex digits.")


def log(core: Core, rid: str | None = None, limit: int = 20) -> dict[str, Any]:
    """Commits (newest first) of the store, or those that changed one resource or entry."""
    whole_number(limit, 1, 1000, "limit must be 1–1,000.")
    if rid is not None:
        _kinds(rid)
    with core.reading() as view:
        if view is None:
            return {"id": rid, "commits": []}
        with core.git() as git, private_umask():
            links = _links(git, view, rid) if rid is not None else {}
            return {"id": rid, "commits": log_commits(git, rid, limit), **links}


def show(core: Core, rid: str, at: str) -> dict[str, Any]:
    """A resource or an entry (or its tombstone) as of revision ``at``."""
    kinds = _kinds(rid)
    with core.reading() as view:
        if view is None:
            raise NotFoundError(f"Unknown revision: {at}")
        with core.git() as git:
            past = View(git.snapshot(git.resolve(at)))
            record = past.record(kinds.live, rid)
            tombstone = past.record(kinds.dead, rid) if record is None else None
            commit = past.snap.commit
            links = _links(git, past, rid)
    if record is None and tombstone is None:
        raise NotFoundError(f"{kinds.live.capitalize()} not found at {at}.")
    if record is not None:
        return {"id": rid, "commit": commit, "state": "live", kinds.live: record, **links}
    assert tombstone is not None
    gone = {"id": tombstone["id"], "deletedAt": tombstone["deletedAt"]}
    return {"id": rid, "commit": commit, "state": "deleted", "tombstone": gone}


def _links(git: GitStore, view: View, rid: str) -> dict[str, list[str]]:
    """An entry's supersede links both ways at ``view``: the entries it supersedes, and
    the active entries that supersede it (each only when there are any)."""
    if rid.startswith("resource_"):
        from ..kinds.resourcefacts import links as resource_links

        return resource_links(view, rid)
    if not rid.startswith("entry_"):
        return {}
    from ..core import bulk

    found = view.record("entry", rid)
    by = sorted(
        other["id"]
        for other in bulk.records(git, view, "entry")
        if other["status"] == "active" and rid in other.get("supersedes", ())
    )
    links = {"supersedes": list(found["supersedes"])} if found and "supersedes" in found else {}
    return {**links, **({"supersededBy": by} if by else {})}


def diff(core: Core, rid: str, old: str | None = None, new: str | None = None) -> dict[str, Any]:
    """How a resource or an entry changed between two revisions (default: its last
    change)."""
    kinds = _kinds(rid)
    with core.reading() as view:
        if view is None:
            raise NotFoundError(f"{kinds.live.capitalize()} not found.")
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
                since = _changed_side(git, kinds, rid, to, changes[0]["parents"])
            return diff_views(View(git.snapshot(since)), View(git.snapshot(to)), rid, kinds)


def restore(core: Core, rid: str, at: str) -> dict[str, Any]:
    """Write a record's content as of ``at`` as a new revision (history untouched)."""
    kinds = _kinds(rid)
    past = show(core, rid, at)
    if past["state"] != "live":
        raise ConflictError(f"The {kinds.live} was deleted at {at}; nothing to restore.")
    then = past[kinds.live]
    with core.transaction("restore") as txn:
        try:
            current = txn.record(kinds.live, rid)
        except CorruptStoreError:  # a damaged copy (a plain git commit): this puts it right
            current = None
        deleted = txn.record(kinds.dead, rid)
        after = max(
            (r for r in (current and current["updatedAt"], deleted and deleted["deletedAt"]) if r),
            default=then["updatedAt"],
        )
        restored = {**then, "updatedAt": later_of(core.clock(), after)}
        if current is not None and {**current, "updatedAt": ""} == {
            **restored,
            "updatedAt": "",
        }:
            return {"restored": False, "id": rid, "from": past["commit"], "commit": None}
        txn.put_record(kinds.live, restored)
        txn.actions.append(("restore", rid, restored.get("title") or restored.get("name")))
        txn.subject = f"restore: {rid} from {str(past['commit'])[:12]}"
    return {"restored": True, "id": rid, "from": past["commit"], "commit": txn.commit_id}


def _changed_side(
    git: GitStore, kinds: Kinds, rid: str, commit: CommitId, parents: list[str]
) -> CommitId | None:
    """The parent to compare ``commit`` with for ``rid``: the first one that differs.

    For a merge that kept this device's revision, that is the other device's side, so
    ``diff`` shows what the merge did to the resource rather than nothing.
    """
    path_of = {name: record_kind(name).path(rid) for name in kinds}
    now = git.snapshot(commit)
    state = tuple(now.blob_id(path) for path in path_of.values())
    for parent in parents:
        snap = git.snapshot(CommitId(parent))
        if tuple(snap.blob_id(path) for path in path_of.values()) != state:
            return CommitId(parent)
    return CommitId(parents[0]) if parents else None
