"""Commit messages: a subject naming the command and ids, a short body, trailers.

Messages hold ids and titles only — never text, URLs or provider secrets — and end in
``Xbrain-Command:`` / ``Xbrain-Agent:`` trailers so ``git log`` answers who changed what.
"""

from __future__ import annotations

import re
from typing import Any

from .errors import InvalidInputError

__all__ = [
    "PURGE_TRAILER",
    "commit_message",
    "describe_commit",
    "quoted_title",
    "trailers",
    "validate_agent",
]

# on the commit ``xbrain purge`` adds, once per oldest commit it rewrote: a device whose
# history holds one still has the purged data, and must clone again, not merge it back
PURGE_TRAILER = "Xbrain-Purge-Of"
_CONTROL = re.compile(r"[\x00-\x1f\x7f\u2028\u2029]")
_MAX_BODY = 50


def validate_agent(agent: str | None) -> str | None:
    """An agent name is one printable line of at most 100 characters."""
    if agent is None or agent == "":
        return None
    if len(agent) > 100 or _CONTROL.search(agent) or not agent.strip():
        raise InvalidInputError("Invalid agent name; use one line of at most 100 characters.")
    return agent.strip()


def quoted_title(title: str | None) -> str:
    """How a message quotes a record's title: ` "Title"` (one line, at most 60 characters),
    or nothing."""
    return _title(title)


def _title(title: str | None) -> str:
    if not title:
        return ""
    clean = _CONTROL.sub(" ", title).strip()
    if len(clean) > 60:
        clean = clean[:59] + "…"
    return f' "{clean}"'


def commit_message(
    command: str,
    actions: list[tuple[str, str, str | None]],
    agent: str | None,
    subject: str | None = None,
    extra: list[tuple[str, str]] | None = None,
) -> str:
    """Build a message from ``(verb, id, title)`` actions; ``extra`` trailers last
    (``Xbrain-Allowed-Secret``: a detector a person let through, and the field)."""
    if subject is None:
        if len(actions) == 1:
            verb, rid, title = actions[0]
            subject = f"{command}: {verb} {rid}{_title(title)}"
        else:
            counts: dict[str, int] = {}
            for verb, _, _ in actions:
                counts[verb] = counts.get(verb, 0) + 1
            parts = ", ".join(f"{verb} {n}" for verb, n in counts.items())
            subject = f"{command}: {parts}"
    lines = [subject, ""]
    if len(actions) > 1:
        for verb, rid, title in actions[:_MAX_BODY]:
            lines.append(f"{verb} {rid}{_title(title)}")
        if len(actions) > _MAX_BODY:
            lines.append(f"… and {len(actions) - _MAX_BODY} more")
        lines.append("")
    lines.append(f"Xbrain-Command: {command}")
    if agent:
        lines.append(f"Xbrain-Agent: {agent}")
    lines += [f"{key}: {_CONTROL.sub(' ', value)}" for key, value in extra or []]
    return "\n".join(lines) + "\n"


def trailers(message: str) -> dict[str, str]:
    """The ``Xbrain-*`` trailers of a commit message."""
    out = {}
    for line in message.splitlines():
        key, sep, value = line.partition(": ")
        if sep and key.startswith("Xbrain-"):
            out[key] = value.strip()
    return out


def describe_commit(info: Any) -> dict[str, Any]:
    """A commit as logs show it (``info``: id, time, author, message, parents): its time
    in ISO 8601 like every other time xbrain prints, and as seconds since the epoch."""
    from datetime import datetime, timezone

    from .timestamps import format_timestamp

    found = trailers(info.message)
    return {
        "commit": info.id,
        "time": format_timestamp(datetime.fromtimestamp(info.time, timezone.utc)),
        "epoch": info.time,
        "author": info.author,
        "command": found.get("Xbrain-Command"),
        "agent": found.get("Xbrain-Agent"),
        "summary": info.message.splitlines()[0] if info.message else "",
        "parents": list(info.parents),
    }
