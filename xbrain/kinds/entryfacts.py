"""An entry's facts: which entries it supersedes, when it holds (``validFrom``,
``validUntil``), who proposed it — optional fields, each written only when set, so an
entry that does not use them keeps its bytes — and which entries are not in force at a
time (recall's rule for whole lists: superseded by an active entry valid by then, or
outside their own validity)."""

from __future__ import annotations

import re
from typing import Any

from ..errors import InvalidInputError
from ..timestamps import parse_timestamp

__all__ = ["MAX_LIST", "check_facts", "moment", "not_in_force"]

MAX_LIST = 50
_ENTRY_ID = re.compile(r"entry_[0-9a-f]{64}")


def moment(value: object, field: str) -> str:
    """An ISO 8601 timestamp, or a bare date (its midnight UTC), normalized."""
    if isinstance(value, str) and _DATE.fullmatch(value):
        value += "T00:00:00Z"
    return parse_timestamp(value, field)


_DATE = re.compile(r"\d{4}-\d{2}-\d{2}", re.ASCII)
_AGENT = re.compile(r"[^\x00-\x1f\x7f]{1,200}")


def check_facts(data: dict[str, Any], entry: dict[str, Any]) -> None:
    """The optional supersede, validity and proposal fields, each only when set."""
    supersedes = data.get("supersedes")
    if supersedes is not None:
        if isinstance(supersedes, str):
            supersedes = [supersedes]
        if (
            not isinstance(supersedes, list)
            or len(supersedes) > MAX_LIST
            or not all((isinstance(rid, str) and _ENTRY_ID.fullmatch(rid)) for rid in supersedes)
        ):
            raise InvalidInputError(f"Entry supersedes: at most {MAX_LIST} entry ids.")
        if entry["id"] in supersedes:
            raise InvalidInputError("An entry cannot supersede itself.")
        if supersedes:
            entry["supersedes"] = list(dict.fromkeys(supersedes))
    for key in ("validFrom", "validUntil"):
        if data.get(key) is not None:
            entry[key] = moment(data[key], key)
    if entry.get("validFrom", "") >= entry.get("validUntil", "\uffff"):
        raise InvalidInputError("Entry validUntil must be after its validFrom.")
    proposed = data.get("proposedBy")
    if proposed is not None:
        if (
            not isinstance(proposed, dict)
            or not set(proposed) <= {"agent", "session"}
            or not all(isinstance(v, str) and _AGENT.fullmatch(v) for v in proposed.values())
        ):
            raise InvalidInputError("Entry proposedBy must be {agent, session} (one line each).")
        if proposed:
            entry["proposedBy"] = {k: proposed[k] for k in ("agent", "session") if k in proposed}


def not_in_force(entries: list[dict[str, Any]], when: str) -> set[str]:
    """The ids among ``entries`` not in force at ``when``: superseded by an active entry
    valid by then, or outside their own validity (recall's rule, for whole lists)."""
    out = {
        old
        for e in entries
        if e["status"] == "active" and e.get("validFrom", "") <= when
        for old in e.get("supersedes", ())
    }
    for e in entries:
        if e.get("validFrom", "") > when or e.get("validUntil", "\uffff") <= when:
            out.add(e["id"])
    return out
