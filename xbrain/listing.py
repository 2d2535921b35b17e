"""``xbrain list``: browse the store, newest ``updatedAt`` first, as brief records.

Reads the committed catalog (one small file per shard) to order and filter by time,
and opens only the records it returns (or, with a provider filter, those it checks).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .inputs import whole_number
from .timestamps import parse_timestamp

if TYPE_CHECKING:  # a listing from the search index (lightread) loads no git code
    from .core import View

__all__ = [
    "BRIEF_FIELDS",
    "Page",
    "brief_record",
    "from_index",
    "inventory",
    "list_floor",
    "list_resources",
]

BRIEF_FIELDS = ("id", "title", "purpose", "useWhen", "limitations", "updatedAt")


def brief_record(resource: dict[str, Any]) -> dict[str, Any]:
    """What a listing shows of one resource (``get ID`` returns all of it)."""
    out = {key: resource[key] for key in BRIEF_FIELDS}
    out["source"] = {"provider": resource["source"]["provider"], "url": resource["source"]["url"]}
    return out


MAX_OFFSET = 10_000_000


def list_floor(limit: int, since: str | None, offset: int) -> str | None:
    """Check a listing's request; the normalized ``since`` (a date is its start, UTC)."""
    whole_number(limit, 1, 1000, "limit must be 1–1,000.")
    whole_number(offset, 0, MAX_OFFSET, f"offset must be 0–{MAX_OFFSET:,}.")
    if isinstance(since, str) and len(since) == 10:
        since += "T00:00:00Z"
    return parse_timestamp(since, "since") if since is not None else None


# (floor, provider, offset, limit, shape) → (total, that page of resources, each as
# shape makes it), None: cannot say
Page = Callable[
    [str | None, str | None, int, int, Callable[[dict[str, Any]], dict[str, Any]]],
    tuple[int, list[dict[str, Any]]] | None,
]


def from_index(
    page: Page,
    *,
    limit: int = 20,
    since: str | None = None,
    provider: str | None = None,
    offset: int = 0,
) -> dict[str, Any] | None:
    """The listing as a derived index holds it (the search index, when it reflects
    ``main``: ``search.query.indexed_listing``), or None when ``page`` cannot say."""
    found = page(list_floor(limit, since, offset), provider, offset, limit, brief_record)
    if found is None:
        return None
    total, results = found
    return {"total": total, "results": results}


def list_resources(
    view: View | None,
    *,
    limit: int = 20,
    since: str | None = None,
    provider: str | None = None,
    offset: int = 0,
) -> dict[str, Any]:
    """Live resources, newest first (ties by id), after skipping ``offset`` of them;
    ``total`` counts every match."""
    from .kinds import resource as resource_kind

    floor = list_floor(limit, since, offset)
    if view is None:
        return {"total": 0, "results": []}
    view.require_derived()  # a listing from a catalog that is gone would be empty
    live = [
        (entry["updatedAt"], rid)
        for rid, entry in view.catalog().items()
        if entry["path"].startswith(resource_kind.DIRECTORY + "/")
        and (floor is None or entry["updatedAt"] >= floor)
    ]
    live.sort(reverse=True)
    page = slice(offset, offset + limit)
    if provider is None:  # the catalog alone decides: open only what is shown
        shown = [resource_kind.get(view, rid) for _, rid in live[page]]
        return {"total": len(live), "results": [brief_record(r) for r in shown if r]}
    matching = (resource_kind.get(view, rid) for _, rid in live)  # the provider is in the record
    hits = [r for r in matching if r is not None and r["source"]["provider"] == provider]
    return {"total": len(hits), "results": [brief_record(r) for r in hits[page]]}


def inventory(view: View | None) -> dict[str, Any]:
    """What ``status`` counts beyond resources: skills by status and their revisions by
    lifecycle state, entries by status (active, retired, proposed) and by kind, and entry
    tombstones."""
    from .kinds import entry as entry_kind
    from .kinds import skill as skill_kind

    revisions = dict.fromkeys(skill_kind.STATES, 0)
    skills: dict[str, Any] = {**dict.fromkeys(skill_kind.STATUSES, 0), "revisions": revisions}
    kinds = {name: dict.fromkeys(entry_kind.STATUSES, 0) for name in entry_kind.KINDS}
    entries: dict[str, Any] = {**dict.fromkeys(entry_kind.STATUSES, 0), "kinds": kinds}
    out = {"skills": skills, "entries": entries, "entryTombstones": 0}
    if view is None:
        return out
    for slug in skill_kind.slugs(view):
        state = skill_kind.read_state(view, slug)
        if state is None:
            continue  # a folder without its skill.yaml is doctor's to report
        skills[state["status"]] += 1
        for revision in state["revisions"]:
            revisions[revision["state"]] += 1
    prefix = entry_kind.DIRECTORY + "/"
    for rid, line in view.catalog().items():
        if line["path"].startswith(prefix):
            record = entry_kind.get(view, rid)
            if record is not None:
                status = entry_kind.status_of(record)
                entries[status] += 1
                kinds[record["kind"]][status] += 1
    out["entryTombstones"] = view.summary().get(entry_kind.TOMBSTONES.summary_key, 0)
    return out
