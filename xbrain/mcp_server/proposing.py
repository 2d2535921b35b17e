"""The MCP tool ``propose_entry``: rules and memories an agent proposes land ``proposed``
(with the agent and session that proposed them) for the user's ``xbrain review``; each
result names the entries in force it may conflict with."""

from __future__ import annotations

from typing import Any

from ..errors import InvalidInputError

__all__ = ["MAX_PROPOSALS", "propose_entry"]

MAX_PROPOSALS = 20


def propose_entry(store: Any, args: dict[str, Any], agent: str) -> dict[str, Any]:
    """``store.entry_put`` of ``args["entries"]`` as proposals by ``agent``."""
    entries = args["entries"]
    if not isinstance(entries, list) or not 1 <= len(entries) <= MAX_PROPOSALS:
        raise InvalidInputError(f"entries: 1-{MAX_PROPOSALS} entries.")
    if any(not isinstance(entry, dict) or "status" in entry for entry in entries):
        raise InvalidInputError("Each entry is an object (without status: it is proposed).")
    session = args.get("session")
    if session is not None and not isinstance(session, str):
        raise InvalidInputError("session must be text.")
    by = {"agent": agent[:200], **({"session": session} if session else {})}
    result: dict[str, Any] = store.entry_put(entries, propose=by)
    return result
