"""A resource's facts (issue 46): which resources it supersedes, when it holds, and its
review state — in a sidecar file beside it, never in the resource itself.

``resource-facts/<aa>/<id>.yaml`` (the resource's own id and shard): ``supersedes``
(resource ids), ``validFrom``/``validUntil`` (ISO 8601; a bare date is its midnight UTC),
``status`` (``proposed``: in the review queue; ``rejected``: refused in review, with its
``reason``; absent: in force), ``proposedBy`` (``{agent, session}``) and ``updatedAt``
(which of two devices' copies is later). Each field only when set.

Why a sidecar: a resource's id, stored bytes and digest are the original store's
contract (SPEC, its test vectors) and providers receive only its fields, so the facts
live in a file of their own, committed with the write that sets them. A sidecar is never
removed (a merge of two devices keeps a file only one side has, so a removal would come
back); a sidecar whose resource is not live is inert. Two devices' copies merge by
keeping the later one with the supersede links of both.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..codec import dump_yaml, load_yaml
from ..core.layout import HEX2, shard
from ..core.registry import FileKind, register
from ..core.view import Transaction, View
from ..errors import InvalidInputError, XbrainError
from ..timestamps import parse_timestamp
from .entryfacts import moment
from .resource import path as resource_path

__all__ = [
    "DIRECTORY",
    "KIND",
    "MAX_LIST",
    "facts_of",
    "links",
    "merge",
    "normalize",
    "path",
    "read_all",
    "write",
]

DIRECTORY = "resource-facts"
MAX_LIST = 50
STATUSES = ("proposed", "rejected")
FIELDS = ("supersedes", "validFrom", "validUntil", "status", "proposedBy", "reason", "updatedAt")
_ID = re.compile(r"resource_[0-9a-f]{64}", re.ASCII)
_LINE = re.compile(r"[^\x00-\x1f\x7f]{1,200}")
_REASON = re.compile(r"[^\x00-\x1f\x7f]{1,1024}")


def normalize(data: Any, rid: str | None = None) -> dict[str, Any]:
    """Valid facts in canonical field order (``rid``: the resource they belong to)."""
    if not isinstance(data, dict):
        raise InvalidInputError("Resource facts must be a mapping.")
    unknown = sorted(str(key) for key in data if key not in FIELDS)
    if unknown:
        raise InvalidInputError(f"Unknown resource facts: {', '.join(unknown)}.")
    out: dict[str, Any] = {}
    supersedes = data.get("supersedes")
    if supersedes is not None:
        _check_links(supersedes)
        if rid is not None and rid in supersedes:
            raise InvalidInputError("A resource cannot supersede itself.")
        if supersedes:
            out["supersedes"] = list(dict.fromkeys(supersedes))
    for key in ("validFrom", "validUntil"):
        if data.get(key) is not None:
            out[key] = moment(data[key], key)
    if out.get("validFrom", "") >= out.get("validUntil", "\uffff"):
        raise InvalidInputError("Resource validUntil must be after its validFrom.")
    status = data.get("status")
    if status is not None:
        if status not in STATUSES:
            raise InvalidInputError("Resource facts status must be proposed or rejected.")
        out["status"] = status
    proposed = data.get("proposedBy")
    if proposed is not None:
        if (
            not isinstance(proposed, dict)
            or not set(proposed) <= {"agent", "session"}
            or not all(isinstance(v, str) and _LINE.fullmatch(v) for v in proposed.values())
        ):
            raise InvalidInputError("Resource proposedBy must be {agent, session} (one line each).")
        if proposed:
            out["proposedBy"] = {k: proposed[k] for k in ("agent", "session") if k in proposed}
    reason = data.get("reason")
    if reason is not None:
        if not isinstance(reason, str) or not _REASON.fullmatch(reason):
            raise InvalidInputError("A rejection reason is one line of 1-1,024 characters.")
        out["reason"] = reason
    if data.get("updatedAt") is not None:
        out["updatedAt"] = parse_timestamp(data["updatedAt"])
    return out


def _shown(value: Any) -> str:
    """A bounded, one-line rendering of a hostile value for a message."""
    text = json.dumps(value, default=str)
    return text if len(text) <= 80 else text[:77] + "..."


def _check_links(supersedes: Any) -> None:
    """``supersedes``: a list of at most MAX_LIST resource ids (each message says what is
    wrong)."""
    if not isinstance(supersedes, list):
        raise InvalidInputError("Resource supersedes must be a list of resource ids.")
    if len(supersedes) > MAX_LIST:
        raise InvalidInputError(f"Resource supersedes: at most {MAX_LIST} resource ids.")
    for old in supersedes:
        if isinstance(old, str) and _ID.fullmatch(old):
            continue
        if isinstance(old, str) and re.fullmatch(r"entry_[0-9a-f]{64}", old, re.ASCII):
            raise InvalidInputError(
                f"Resource supersedes: {old} is an entry id; a resource supersedes only "
                "resources (xbrain supersede links two entries)."
            )
        raise InvalidInputError(
            f"Resource supersedes: {_shown(old)} is not a resource id "
            "(resource_ and 64 hex digits)."
        )


def _parse(data: bytes) -> dict[str, Any]:
    try:
        value = load_yaml(data)
    except Exception as exc:  # every parser failure means the same: not a facts file
        raise InvalidInputError("Resource facts are not valid YAML.") from exc
    found = normalize(value)
    if "updatedAt" not in found:
        raise InvalidInputError("Stored resource facts have no updatedAt.")
    return found


def _check(data: bytes) -> str | None:
    try:
        _parse(data)
    except XbrainError as exc:
        return exc.message.rstrip(".")
    return None


def merge(a: bytes, b: bytes) -> bytes:
    """Two devices' copies of one sidecar: the later (tie: the greater bytes), with the
    supersede links of both, and accepted when either side accepted it (a resource in
    force is never proposed again) — the same whichever side is ours."""
    try:
        one, two = _parse(a), _parse(b)
    except XbrainError:
        return max(a, b)  # the incoming check refuses a damaged copy before this
    kept, other = (one, two) if (one["updatedAt"], a) >= (two["updatedAt"], b) else (two, one)
    merged = dict(kept)
    links = kept.get("supersedes", [])
    more = [old for old in other.get("supersedes", []) if old not in links]
    if more:
        merged["supersedes"] = sorted([*links, *more])[:MAX_LIST]
    if merged.get("status") == "proposed" and "status" not in other:
        del merged["status"]  # an acceptance is final: a later edit of the proposal keeps it
    return dump_yaml(merged)


KIND = FileKind(
    "resource-facts",
    rf"{DIRECTORY}/({HEX2})/resource_\1[0-9a-f]{{62}}\.yaml",
    16 << 10,
    "resource-facts",
    yaml=True,
    check=_check,
    merge=merge,
)
register(KIND)


def path(rid: str) -> str:
    """``resource-facts/<aa>/<id>.yaml``."""
    return f"{DIRECTORY}/{shard(rid)}/{rid}.yaml"


def facts_of(view: View, rid: str) -> dict[str, Any]:
    """The facts of resource ``rid`` ({} when it has none)."""
    data = view.read(path(rid))
    return {} if data is None else _parse(data)


def read_all(view: View) -> dict[str, dict[str, Any]]:
    """Every sidecar at ``view``: resource id → its facts."""
    out: dict[str, dict[str, Any]] = {}
    for file, data in view.files(DIRECTORY):
        rid = file.rsplit("/", 1)[-1].removesuffix(".yaml")
        if _ID.fullmatch(rid):
            out[rid] = _parse(data)
    return out


def write(txn: Transaction, rid: str, facts: dict[str, Any], now: str) -> bool:
    """Stage the sidecar of ``rid`` (its ``updatedAt`` set to ``now``, later than the
    one it replaces); unchanged facts stage nothing. Whether it staged a change."""
    old = facts_of(txn, rid)
    if {k: v for k, v in old.items() if k != "updatedAt"} == facts:
        return False
    from ..timestamps import later_of

    stamp = later_of(now, old["updatedAt"]) if "updatedAt" in old else now
    txn.write(path(rid), dump_yaml(normalize({**facts, "updatedAt": stamp}, rid)))
    return True


def links(view: Any, rid: str) -> dict[str, list[str]]:
    """A resource's supersede links both ways at ``view``: the resources it supersedes,
    and the live resources in force that supersede it (each only when there are any)."""
    every = read_all(view)
    own = every.get(rid, {})
    by = sorted(
        other
        for other, facts in every.items()
        if rid in facts.get("supersedes", ())
        and not facts.get("status")
        and view.read(resource_path(other)) is not None
    )
    out = {"supersedes": list(own["supersedes"])} if own.get("supersedes") else {}
    return {**out, **({"supersededBy": by} if by else {})}
