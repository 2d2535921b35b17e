"""Whether an entry is in force at a time: not superseded by an active entry valid by
then, and within its own ``validFrom``/``validUntil``. Worked out from the entries at the
commit being read (the links live only in the newer entry), never stored."""

from __future__ import annotations

from typing import Any

__all__ = ["now_if_needed", "standing"]


def standing(
    entry: dict[str, Any], links: dict[str, list[tuple[str, str]]], when: str
) -> dict[str, Any] | None:
    """Why ``entry`` is not in force at ``when`` (superseded by an active entry valid by
    then, or outside its own validity), or None."""
    by = sorted(new for new, since in links.get(entry["id"], ()) if since <= when)
    if by:
        return {"supersededBy": by}
    if entry.get("validUntil", "\uffff") <= when:
        return {"expired": entry["validUntil"]}
    if entry.get("validFrom", "") > when:
        return {"validFrom": entry["validFrom"]}
    return None


def now_if_needed(links: dict[str, Any], entries: list[tuple[dict[str, Any], set[str]]]) -> str:
    """The current time when any entry has links or validity to judge, else "" (none)."""
    if links or any("validFrom" in e or "validUntil" in e for e, _ in entries):
        from ..timestamps import now_timestamp

        return now_timestamp()
    return ""
