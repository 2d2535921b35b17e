"""Entries (SPEC §13): rules and memories routed into an agent's context.

``entries/<aa>/<id>.yaml`` holds a live entry and ``entry-tombstones/<aa>/<id>.yaml`` a
deleted one (``{id, deletedAt}``); they are siblings sharing ``entry_`` ids, written by
the same rules as resources. ``id = "entry_" + sha256(JSON ["entry", scope, name])``.

Decisions where SPEC §13 leaves a choice:

* ``name`` is one line of at most 200 characters, not only a slug: a memory file's
  ``## `` sections become entries named ``<file stem>#<section title>`` (memex's own
  location form), so titles in any language keep their words.
* ``source`` (optional) remembers the Markdown an entry was imported from (its path in
  the folder, its section, its exact text), so an export writes an unchanged entry back
  byte for byte; an entry edited since is rendered from its fields.
* Unknown input fields are dropped and counted, as ``put`` does for resources.
* Facts that change (issue 46): ``supersedes`` (entry ids), ``validFrom`` and
  ``validUntil`` (ISO 8601; a bare date is its midnight UTC), and ``proposedBy``
  (``{agent, session}`` of a proposal) are written only when set, after ``updatedAt``,
  so an entry that uses none of them keeps its bytes and its revision. The link lives
  in the superseding entry alone: "superseded" is derived from the entries at the
  commit being read, never stored in the old one. ``status`` ``proposed``: in the review
  queue, never recalled.
"""

from __future__ import annotations

import math
import re
from typing import Any

from ..codec import canonical_json, dump_yaml, load_yaml, sha256_hex
from ..core.registry import RecordKind, register
from ..core.view import Transaction, View
from ..errors import InvalidInputError
from ..text import holds_lone_surrogate
from ..timestamps import parse_timestamp
from .entryfacts import check_facts, not_in_force

__all__ = [
    "DIRECTORY",
    "KIND",
    "KINDS",
    "TOMBSTONES",
    "entry_id",
    "get",
    "is_id",
    "normalize_entry",
    "not_in_force",
    "status_of",
    "tombstone",
]

DIRECTORY = "entries"
TOMBSTONE_DIRECTORY = "entry-tombstones"
KINDS = ("rule", "memory", "workflow", "tool-guidance", "session-learning", "stop-rule")
FIELDS = (
    "id",
    "kind",
    "name",
    "scope",
    "description",
    "body",
    "oneLiner",
    "queries",
    "keywords",
    "caseSensitive",
    "paths",
    "events",
    "boost",
    "alwaysOn",
    "status",
    "trust",
    "provenance",
    "updatedAt",
    "supersedes",
    "validFrom",
    "validUntil",
    "proposedBy",
    "source",
)
STATUSES = ("active", "retired", "proposed")
MAX_BODY = 64 * 1024
MAX_LIST = 50
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_SCOPE = re.compile(r"global|project:[^\s\x00-\x1f\x7fA-Z]{1,256}")
_EVENT = re.compile(r"[A-Za-z][A-Za-z0-9]{0,39}")


def status_of(entry: dict[str, Any]) -> str:
    """An entry's status as recall, ``entry list`` and projection treat it: ``retired``
    when it says so, or when its description begins with ``RETIRED`` (memex's legacy form,
    "the same treatment until corpus migration adds structured status"); else what it
    says (``active``, or ``proposed`` awaiting review). The record itself keeps what it
    said (its bytes, its id, its export are unchanged)."""
    if entry["status"] == "active" and entry["description"].lstrip().startswith("RETIRED"):
        return "retired"
    return str(entry["status"])


def entry_id(scope: str, name: str) -> str:
    """``"entry_" + sha256(JSON ["entry", scope, name])``, hex."""
    return "entry_" + sha256_hex(canonical_json(["entry", scope, name]).encode())


def _text(data: dict[str, Any], key: str, limit: int, *, line: bool = False) -> str:
    value = data.get(key, "")
    if value is None:
        value = ""
    if not isinstance(value, str):
        raise InvalidInputError(f"Entry {key} must be text.")
    if len(value) > limit:
        raise InvalidInputError(f"Entry {key} is over {limit:,} characters.")
    if _CONTROL.search(value) or (line and "\n" in value):
        raise InvalidInputError(f"Entry {key} has a control character or a line break.")
    return value


def _texts(data: dict[str, Any], key: str, limit: int = 500) -> list[str]:
    value = data.get(key, [])
    if value is None:
        value = []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InvalidInputError(f"Entry {key} must be a list of text.")
    if len(value) > MAX_LIST or any(len(v) > limit or _CONTROL.search(v) for v in value):
        raise InvalidInputError(f"Entry {key}: at most {MAX_LIST} items of {limit} characters.")
    return [v.strip() for v in value if v.strip()]


def _choice(data: dict[str, Any], key: str, allowed: tuple[str, ...], default: str) -> str:
    value = data.get(key, default)
    if value not in allowed:
        raise InvalidInputError(f"Entry {key} must be one of: {', '.join(allowed)}.")
    return str(value)


def _source(value: Any) -> dict[str, Any] | None:
    if value is None:
        return None
    if (
        not isinstance(value, dict)
        or not {"path", "section", "order", "markdown"} <= set(value) <= _SOURCE_KEYS
        or not (value.get("folder") is None or _FOLDER.fullmatch(str(value["folder"])))
        or not isinstance(value["path"], str)
        or not isinstance(value["markdown"], str)
        or not (value["section"] is None or isinstance(value["section"], str))
        or isinstance(value["order"], bool)
        or not isinstance(value["order"], int)
        or not 0 <= value["order"] < 10_000
        or len(value["markdown"]) > 2 * MAX_BODY
    ):
        raise InvalidInputError("Entry source must be {path, section, order, markdown}.")
    from .skillformat import check_path

    path = check_path(value["path"], in_store=False)  # relative, plain: export writes it
    if path.split("/", 1)[0] not in ("rules", "memory", "skills") or not path.endswith(".md"):
        raise InvalidInputError(
            "Entry source path must be a .md file under rules/, memory/ or skills/."
        )
    out = {
        "path": path,
        "section": value["section"],
        "order": value["order"],
        "markdown": value["markdown"],
    }
    if value.get("folder") is not None:
        out["folder"] = value["folder"]
    return out


_SOURCE_KEYS = {"path", "section", "order", "markdown", "folder"}
_FOLDER = re.compile(r"[0-9a-f]{16}")


def normalize_entry(data: Any, now: str) -> tuple[dict[str, Any], list[str]]:
    """A valid entry in canonical field order, and the unknown fields dropped."""
    if not isinstance(data, dict):
        raise InvalidInputError("An entry must be an object.")
    kind = _choice(data, "kind", KINDS, "")
    name = _text(data, "name", 200, line=True).strip()
    if not name:
        raise InvalidInputError("Entry name must be 1-200 characters on one line.")
    scope = data.get("scope", "global")
    if not isinstance(scope, str) or not _SCOPE.fullmatch(scope):
        raise InvalidInputError("Entry scope must be global or project:<id> (lowercase).")
    boost = data.get("boost", 0)
    if (
        isinstance(boost, bool)
        or not isinstance(boost, int | float)
        or not math.isfinite(boost)
        or not -0.2 <= boost <= 0.2
    ):
        raise InvalidInputError("Entry boost must be a number from -0.2 to 0.2.")
    always = data.get("alwaysOn", False)
    if not isinstance(always, bool):
        raise InvalidInputError("Entry alwaysOn must be true or false.")
    case = data.get("caseSensitive", False)
    if not isinstance(case, bool):
        raise InvalidInputError("Entry caseSensitive must be true or false.")
    events = _texts(data, "events", 40)
    if not all(_EVENT.fullmatch(event) for event in events):
        raise InvalidInputError("Entry events are hook event names (e.g. PreToolUse).")
    provenance = data.get("provenance")
    if provenance is not None:
        provenance = _text(data, "provenance", 2048, line=True)
    rid = entry_id(scope, name)
    if "id" in data and data["id"] != rid:
        raise InvalidInputError(f"Entry id does not match its scope and name (expected {rid}).")
    entry: dict[str, Any] = {
        "id": rid,
        "kind": kind,
        "name": name,
        "scope": scope,
        "description": _text(data, "description", 1024),
        "body": _text(data, "body", MAX_BODY),
        "oneLiner": _text(data, "oneLiner", 300, line=True),
        "queries": _texts(data, "queries"),
        "keywords": _texts(data, "keywords", 100),
        **({"caseSensitive": True} if case else {}),  # only when set: older bytes unchanged
        "paths": _texts(data, "paths"),
        "events": events,
        "boost": float(boost),
        "alwaysOn": always,
        "status": _choice(data, "status", STATUSES, "active"),
        "trust": _choice(data, "trust", ("trusted", "untrusted"), "trusted"),
        "provenance": provenance,
        "updatedAt": parse_timestamp(data.get("updatedAt", now)),
    }
    check_facts(data, entry)
    source = _source(data.get("source"))  # a source path that is not UTF-8: its own words
    if source is not None:
        entry["source"] = source
    if holds_lone_surrogate(entry):  # JSON may escape one (\ud800); no UTF-8 file can hold it
        raise InvalidInputError("Entry text must not hold unpaired surrogates.")
    dropped = sorted(str(key) for key in data if key not in FIELDS)
    return entry, dropped


def _parse_entry(data: bytes) -> dict[str, Any]:
    raw = _load(data)
    if "updatedAt" not in raw:
        raise InvalidInputError("A stored entry has no updatedAt.")
    entry, dropped = normalize_entry(raw, raw["updatedAt"])
    if dropped:
        raise InvalidInputError(f"A stored entry has unknown fields: {', '.join(dropped)}.")
    return entry


def _parse_tombstone(data: bytes) -> dict[str, Any]:
    raw = _load(data)
    if not {"id", "deletedAt"} <= set(raw) <= {"id", "deletedAt", "reason"} or not is_id(raw["id"]):
        raise InvalidInputError("An entry tombstone is {id, deletedAt} (and a reason).")
    out = {"id": raw["id"], "deletedAt": parse_timestamp(raw["deletedAt"], "deletedAt")}
    if "reason" in raw:  # a proposal rejected in review says why
        out["reason"] = _text(raw, "reason", 1024, line=True)
    return out


def _load(data: bytes) -> dict[str, Any]:
    try:
        value = load_yaml(data)
    except Exception as exc:  # ruamel raises many kinds; all mean the same here
        raise InvalidInputError("Not valid YAML.") from exc
    if not isinstance(value, dict):
        raise InvalidInputError("Not a mapping.")
    return value


def search_fields(entry: dict[str, Any]) -> tuple[str, ...]:
    """The searchable text per index field: queries and keywords where a resource's
    title-like fields go, the description, and the body as text."""
    return (
        " ".join(entry["keywords"]),
        entry["name"],
        " ".join(entry["queries"]),
        entry["description"],
        entry["oneLiner"],
        entry["body"],
    )


def _combine(kept: dict[str, Any], other: dict[str, Any]) -> dict[str, Any]:
    """Two devices' revisions of one entry: the kept one, with the supersede links of
    the other added (each device may have superseded something through it)."""
    links = kept.get("supersedes", [])
    more = [rid for rid in other.get("supersedes", []) if rid not in links]
    if not more:
        return kept
    merged = {**kept, "supersedes": [*links, *more][:MAX_LIST]}
    if "validFrom" in other and "validFrom" not in kept:
        merged["validFrom"] = other["validFrom"]
        if merged["validFrom"] >= kept.get("validUntil", "\uffff"):
            del merged["validFrom"]
    record, _ = normalize_entry(merged, "")
    return record


KIND = RecordKind(
    name="entry",
    directory=DIRECTORY,
    id_prefix="entry_",
    max_bytes=512 << 10,
    parse=_parse_entry,
    serialize=dump_yaml,
    catalog_fields=lambda record: {"updatedAt": record["updatedAt"]},
    summary_key="entries",
    schema="entry",
    siblings=("entry-tombstone",),
    search_fields=search_fields,
    combine=_combine,
)
TOMBSTONES = RecordKind(
    name="entry-tombstone",
    directory=TOMBSTONE_DIRECTORY,
    id_prefix="entry_",
    max_bytes=4 << 10,
    parse=_parse_tombstone,
    serialize=dump_yaml,
    catalog_fields=lambda record: {"deletedAt": record["deletedAt"]},
    summary_key="entryTombstones",
    schema="entry-tombstone",
    siblings=("entry",),
    clock="deletedAt",
    tombstone=True,
)
register(KIND)
register(TOMBSTONES)


def is_id(rid: object) -> bool:
    """True for ``entry_`` and 64 hex digits."""
    return KIND.is_id(rid)


def get(view: View, rid: str) -> dict[str, Any] | None:
    """A live entry, or None."""
    return view.record("entry", rid)


def tombstone(view: View, rid: str) -> dict[str, Any] | None:
    """An entry's tombstone ``{id, deletedAt}``, or None."""
    return view.record("entry-tombstone", rid)


def put(txn: Transaction, entry: dict[str, Any]) -> None:
    """Stage a live entry (replacing its tombstone)."""
    txn.put_record("entry", entry)


def bury(txn: Transaction, rid: str, deleted_at: str, reason: str | None = None) -> None:
    """Stage a tombstone in place of the live entry (``reason``: why a proposal was
    rejected)."""
    record = {"id": rid, "deletedAt": deleted_at}
    if reason:
        record["reason"] = reason
    txn.put_record("entry-tombstone", record)
