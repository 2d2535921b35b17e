"""Entries (SPEC §13): put, get, list, delete, retire/activate, import and export.

Writes follow the resource rules: one commit per command that changed something, a
newer ``updatedAt`` to update (older: stale; equal with other content: conflict), the
same content again ``unchanged``, a delete leaves a tombstone. An entry given without
``updatedAt`` (a memex file, say) takes the current time, and counts as unchanged when
nothing else differs, so importing a folder twice changes nothing. ``import`` never
brings back an entry deleted here; ``put`` does (it is explicit).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ..codec import digest
from ..core import Core, Transaction
from ..errors import ConflictError, InvalidInputError, NotFoundError, StaleError
from ..kinds import entry as kind
from ..text import refuse_hidden
from ..timestamps import later_of

__all__ = [
    "apply",
    "delete",
    "get",
    "list_entries",
    "parse_input",
    "prepare",
    "put",
    "set_status",
]

MAX_BATCH = 1000


def _without_time(entry: dict[str, Any]) -> dict[str, Any]:
    """What an import compares: the entry but its time and which folder it came from (the
    same entry imported again from an export of it is unchanged; it stays its first
    folder's)."""
    out = {k: v for k, v in entry.items() if k != "updatedAt"}
    source = out.get("source")
    if isinstance(source, dict) and "folder" in source:
        out["source"] = {k: v for k, v in source.items() if k != "folder"}
    return out


Prepared = tuple[dict[str, Any], list[str], bool]  # (entry, dropped fields, had updatedAt)


def prepare(items: list[Any], now: str) -> list[Prepared]:
    """Every raw entry validated and normalized once, before the store is touched; two
    entries with the same scope and name in one batch are refused."""
    out: list[Prepared] = []
    seen: set[str] = set()
    for number, raw in enumerate(items, 1):
        try:
            new, dropped = kind.normalize_entry(raw, now)
            for field in ("name", "description", "oneLiner"):  # read at a glance
                refuse_hidden(new[field], field)
        except InvalidInputError as exc:  # which one, in a folder or a list
            where = _where(raw, number, len(items))
            raise InvalidInputError(f"{where}: {exc.message}" if where else exc.message) from None
        if new["id"] in seen:
            raise InvalidInputError(
                f"Two entries in one batch have the same scope and name: {new['name']!a}."
            )
        seen.add(new["id"])
        out.append((new, dropped, isinstance(raw, dict) and "updatedAt" in raw))
    return out


def _where(raw: Any, number: int, count: int) -> str:
    """The file (and section) a raw entry came from, else its place in a list of more
    than one; "" for a single entry."""
    source = raw.get("source") if isinstance(raw, dict) else None
    if isinstance(source, dict) and isinstance(source.get("path"), str):
        section = source.get("section")
        return f"{source['path']}" + (f" ({section})" if isinstance(section, str) else "")
    return f"Entry {number} of {count}" if count > 1 else ""


def apply(
    txn: Transaction,
    items: list[Prepared],
    now: str,
    *,
    restore: bool,
    results: list[dict[str, Any]],
) -> dict[str, int]:
    """Upsert prepared entries by the write rules; counts by status."""
    counts = {"added": 0, "updated": 0, "unchanged": 0, "skippedDeleted": 0}
    for new, dropped, timed in items:
        rid = new["id"]
        old = kind.get(txn, rid)
        dead = kind.tombstone(txn, rid) if old is None else None
        if "supersedes" in new and "validFrom" not in new:
            # a supersession takes effect from then on: --as-of an earlier date still
            # answers with what it replaced
            new["validFrom"] = (old or {}).get("validFrom") or now
        if dead is not None and not timed and not restore:
            counts["skippedDeleted"] += 1
            results.append({"id": rid, "name": new["name"], "status": "skipped_deleted"})
            continue
        if not timed and old is not None:
            if _without_time(old) == _without_time(new):
                new = old
            else:
                new["updatedAt"] = later_of(now, old["updatedAt"])
        elif not timed and dead is not None:
            new["updatedAt"] = later_of(now, dead["deletedAt"])
        proposal = new["status"] == "proposed" and "proposedBy" in new
        if proposal and old is not None and old["status"] != "proposed":
            # a proposal never hides what is in force
            raise ConflictError(
                f"Entry {new['name']!a} exists; propose a new entry that supersedes it."
            )
        if (old is not None and new["updatedAt"] < old["updatedAt"]) or (
            dead is not None and new["updatedAt"] <= dead["deletedAt"]
        ):
            raise StaleError(f"Stale entry {new['name']!a}; use a newer updatedAt.")
        entry_result: dict[str, Any] = {"id": rid, "name": new["name"]}
        if dropped:
            entry_result["droppedFields"] = dropped
        if old is not None and digest(old) == digest(new):
            counts["unchanged"] += 1
            results.append({**entry_result, "status": "unchanged"})
            continue
        if old is not None and new["updatedAt"] == old["updatedAt"]:
            raise ConflictError(f"Conflicting entry {new['name']!a}; use a newer updatedAt.")
        status = "updated" if old is not None else "added"
        counts[status] += 1
        results.append({**entry_result, "status": status})
        kind.put(txn, new)
        verb = "update" if old is not None else ("restore" if dead else "add")
        txn.actions.append((verb, rid, new["name"]))
    return counts


def parse_input(data: bytes, name: str = "-") -> Any:
    """``entry put`` input: JSON (an entry or a list), Markdown with frontmatter (one
    entry; ``type`` names its kind), or YAML (a mapping or a list)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInputError("Input is not UTF-8 text.") from None
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        from ..inputs import parse_json

        return parse_json(text, "Invalid entry JSON.")
    if text.startswith("---\n"):
        from ..kinds.entryformat import parse_markdown

        stem = "" if name == "-" else name.rsplit("/", 1)[-1].removesuffix(".md")
        (raw,) = parse_markdown(text, f"rules/{stem}.md", "")  # no name: the file's
        if not raw.get("kind"):
            raise InvalidInputError("A Markdown entry needs type: in its frontmatter.")
        raw.pop("source")
        return raw
    from ..codec import load_yaml, yaml_problem

    try:
        value = load_yaml(data)
    except Exception as exc:  # ruamel raises many kinds; its problem and place tell them apart
        raise InvalidInputError(f"Input is not valid YAML: {yaml_problem(exc)}") from None
    if not isinstance(value, dict | list):
        raise InvalidInputError("Input is not JSON, YAML or Markdown with frontmatter.")
    return value


Existing = Callable[[], list[dict[str, Any]]]  # every entry now (brief: no body)


def put(
    core: Core,
    items: Any,
    command: str = "entry put",
    restore: bool = True,
    *,
    propose: dict[str, str] | None = None,
    existing: Existing | None = None,
) -> dict[str, Any]:
    """Validate then upsert 1–1,000 entries as one commit. ``propose``: the entries land
    ``proposed`` with this ``proposedBy`` (an agent's write, for review); else an agent
    named on the core proposes when the store's ``review.agentWrites`` says so.
    ``existing``: the entries before the write, for ``possibleConflicts``."""
    from .review import conflicts, proposal

    batch = items if isinstance(items, list) else [items]
    if not 1 <= len(batch) <= MAX_BATCH:
        raise InvalidInputError("Supply 1–1,000 entries per batch.")
    now = core.clock()
    propose = proposal(core, propose)
    if propose is not None:
        batch = [
            {**raw, "status": "proposed", "proposedBy": propose} if isinstance(raw, dict) else raw
            for raw in batch
        ]
    prepared = prepare(batch, now)
    before = existing() if existing is not None else None
    results: list[dict[str, Any]] = []
    with core.transaction(command) as txn:
        counts = apply(txn, prepared, now, restore=restore, results=results)
    routed = {new["id"] for new, _, _ in prepared if _routed(new)}
    for result in results:
        result.setdefault("possibleConflicts", [])  # every result lists them
        if result.get("id") not in routed and result.get("status") != "unchanged":
            result["note"] = UNROUTED
    if before is not None:
        conflicts([new for new, _, _ in prepared], before, results)
    return {**counts, "results": results, "commit": txn.commit_id}


UNROUTED = (
    "No queries or keywords: recall finds it only through its description, which scores "
    "below a matching query; add queries (what a prompt that needs it looks like)."
)


def _routed(entry: dict[str, Any]) -> bool:
    """Whether ``entry`` says how a prompt reaches it beyond its description: queries,
    keywords, paths or events, or always loaded."""
    return bool(
        entry.get("alwaysOn")
        or any(entry.get(field) for field in ("queries", "keywords", "paths", "events"))
    )


def get(core: Core, rid: str) -> dict[str, Any]:
    """One entry (private content); a deleted one says so (and why, when a review
    rejected it)."""
    if not kind.is_id(rid):
        raise InvalidInputError("Invalid entry ID; expected entry_ and 64 hex digits.")
    with core.reading() as view:
        found = None if view is None else kind.get(view, rid)
        dead = None if view is None or found is not None else kind.tombstone(view, rid)
    if found is None:
        when = f" (deleted at {dead['deletedAt']})" if dead else ""
        if dead and dead.get("reason"):
            when = f" (rejected at {dead['deletedAt']}: {dead['reason']})"
        raise NotFoundError(f"Entry not found{when}.")
    return found


Brief = Callable[[Iterable[dict[str, Any]]], list[dict[str, Any]]]  # entries -> brief records


def list_entries(
    core: Core,
    *,
    kind_filter: str | None = None,
    status: str | None = None,
    cached: Callable[[Brief], list[dict[str, Any]] | None] | None = None,
) -> dict[str, Any]:
    """Entries as brief records, by kind then name. ``cached(brief)``: ``brief`` of every
    entry in a derived cache that reflects ``main`` (recall's entry cache,
    ``search.entrycache.listed``), or None when it cannot say; then git answers."""
    if kind_filter is not None and kind_filter not in kind.KINDS:
        raise InvalidInputError(f"--kind must be one of: {', '.join(kind.KINDS)}.")
    if status not in (None, *kind.STATUSES):
        raise InvalidInputError("--status must be active, retired or proposed.")

    def brief(found: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
        return [
            {**{key: entry[key] for key in _BRIEF}, "status": kind.status_of(entry)}
            for entry in found
            if (kind_filter is None or entry["kind"] == kind_filter)
            and (status is None or kind.status_of(entry) == status)
        ]

    out = None if cached is None else cached(brief)
    if out is None:
        from ..core import bulk

        out = []
        with core.reading() as view:
            if view is not None:
                with core.git() as git:
                    out = brief(bulk.records(git, view, "entry"))
    out.sort(key=lambda e: (e["kind"], e["scope"], e["name"]))
    return {"count": len(out), "entries": out}


_BRIEF = ("id", "kind", "name", "scope", "description", "oneLiner", "status", "trust", "updatedAt")


def delete(core: Core, rid: str) -> dict[str, Any]:
    """Replace a live entry with a tombstone; an absent id changes nothing."""
    if not kind.is_id(rid):
        raise InvalidInputError("Invalid entry ID; expected entry_ and 64 hex digits.")
    if not core.exists():
        core.check_dir()
        return {"deleted": False, "commit": None}
    with core.transaction("entry delete") as txn:
        old = kind.get(txn, rid)
        if old is not None:
            kind.bury(txn, rid, later_of(core.clock(), old["updatedAt"]))
            txn.actions = [("delete", rid, old["name"])]
    return {"deleted": old is not None, "commit": txn.commit_id}


def set_status(core: Core, rid: str, status: str) -> dict[str, Any]:
    """``retire`` or ``activate`` an entry (a new revision; nothing when already so)."""
    if not kind.is_id(rid):
        raise InvalidInputError("Invalid entry ID; expected entry_ and 64 hex digits.")
    command = "entry retire" if status == "retired" else "entry activate"
    with core.transaction(command) as txn:
        old = kind.get(txn, rid)
        if old is None:
            raise NotFoundError("Entry not found.")
        changed = old["status"] != status
        if changed:
            new = {**old, "status": status, "updatedAt": later_of(core.clock(), old["updatedAt"])}
            kind.put(txn, new)
            txn.actions = [("retire" if status == "retired" else "activate", rid, old["name"])]
    return {"id": rid, "status": status if changed else "unchanged", "commit": txn.commit_id}
