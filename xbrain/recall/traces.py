"""Execution traces and what they suggest (SPEC §13; memex's traces and observations).

A session's trace is what recall showed it (``telemetry``'s ``shown`` rows) beside the
tools it called: ``PostToolUse`` (and ``PostToolUseFailure``) records each call's tool
name and outcome, ``success`` or ``error`` — never its input or output. The rows live in
the same private telemetry database (0600, never committed, switched off and erased with
it), at most ``MAX_CALLS`` per session, and the calls of sessions idle for a week are
swept (at most once an hour), as session state is.

``observations`` reads the traces and says what they suggest, as a report — nothing is
ever changed by it:

* ``never-matched`` — active entries no recall has shown (retire them, or give them
  queries a prompt would use);
* ``not-acted-on`` — entries shown in ``OFTEN`` traced sessions or more (sessions that
  recorded tool calls) where no tool call ever followed the showing: they fire on
  prompts the agent only talks about;
* ``fire-together`` — entries always shown in the same sessions, ``TOGETHER`` sessions
  or more: merge them, or make one more specific.
"""

from __future__ import annotations

import contextlib
import re
import sqlite3
import time
from pathlib import Path
from typing import Any

from .session import IDLE_DAYS, SWEEP_EVERY, file_name
from .telemetry import connect, enabled, reader

__all__ = ["MAX_CALLS", "OFTEN", "TOGETHER", "observations", "outcome", "record_call"]

MAX_CALLS = 2000  # tool calls kept per session; later ones are not recorded
OFTEN = 3
TOGETHER = 3
_TOOL = re.compile(r"[A-Za-z0-9_.:-]{1,128}")  # Bash, Edit, mcp__server__tool


def outcome(payload: dict[str, Any]) -> str:
    """``error`` for a ``PostToolUseFailure``, or a response that says it failed
    (``success: false``, ``is_error``, ``interrupted``); else ``success``. Only these
    flags are read, never the response's text."""
    if payload.get("hook_event_name") == "PostToolUseFailure":
        return "error"
    response = payload.get("tool_response")
    if isinstance(response, dict) and (
        response.get("success") is False
        or any(response.get(flag) is True for flag in ("is_error", "isError", "interrupted"))
    ):
        return "error"
    return "success"


def record_call(control: Path, session: str | None, tool: Any, result: str) -> None:
    """Note one tool call of ``session`` (its name, ``result``); nothing without a
    session, with telemetry off, or once the session has ``MAX_CALLS``."""
    if not session or not control.is_dir() or not enabled(control):
        return
    name = tool if isinstance(tool, str) and _TOOL.fullmatch(tool) else "other"
    key, now = file_name(session), time.time()
    conn = connect(control)
    try:
        (count,) = conn.execute("SELECT COUNT(*) FROM tool WHERE session = ?", (key,)).fetchone()
        if count < MAX_CALLS:
            conn.execute("INSERT INTO tool VALUES (?, ?, ?, ?)", (now, key, name, result))
        _sweep(conn, now)
    finally:
        conn.close()


def _sweep(conn: sqlite3.Connection, now: float) -> None:
    """Forget the calls of sessions idle for ``IDLE_DAYS``, at most once an hour."""
    conn.execute("CREATE TABLE IF NOT EXISTS swept (time REAL NOT NULL)")
    row = conn.execute("SELECT MAX(time) FROM swept").fetchone()
    if row[0] is not None and now - row[0] < SWEEP_EVERY:
        return
    conn.execute(
        "DELETE FROM tool WHERE session IN "
        "(SELECT session FROM tool GROUP BY session HAVING MAX(time) < ?)",
        (now - IDLE_DAYS * 86400,),
    )
    conn.execute("DELETE FROM swept")
    conn.execute("INSERT INTO swept VALUES (?)", (now,))


def observations(control: Path, entries: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """What the traces suggest about ``entries`` (id → ``{name, kind, status}``)."""
    shown: dict[str, dict[str, float]] = {}  # id → session → first shown
    last_call: dict[str, float] = {}  # session → its last tool call
    calls = errors = 0
    conn = reader(control)
    if conn is not None:
        try:
            for rid, session, first in conn.execute(
                "SELECT id, session, MIN(time) FROM shown WHERE session IS NOT NULL "
                "GROUP BY id, session"
            ):
                if rid in entries:  # entries only (not skills or resources), still there
                    shown.setdefault(rid, {})[session] = first
            with contextlib.suppress(sqlite3.OperationalError):  # from before traces
                for session, last, count, failed in conn.execute(
                    "SELECT session, MAX(time), COUNT(*), SUM(outcome = 'error') FROM tool "
                    "GROUP BY session"
                ):
                    last_call[session] = last
                    calls, errors = calls + count, errors + int(failed or 0)
        finally:
            conn.close()
    found = [
        _observed("never-matched", [rid], entries)
        for rid, entry in sorted(entries.items(), key=lambda item: (item[1]["name"], item[0]))
        if entry["status"] == "active" and rid not in shown
    ]
    for rid in sorted(shown, key=lambda rid: _name(rid, entries)):
        traced = {s: t for s, t in shown[rid].items() if s in last_call}
        if len(traced) >= OFTEN and all(last_call[s] < t for s, t in traced.items()):
            found.append(_observed("not-acted-on", [rid], entries, len(traced)))
    groups: dict[frozenset[str], list[str]] = {}
    for rid, seen in shown.items():
        if len(seen) >= TOGETHER:
            groups.setdefault(frozenset(seen), []).append(rid)
    for together, ids in sorted(groups.items(), key=lambda item: sorted(item[1])):
        if len(ids) > 1:
            ids = sorted(ids, key=lambda rid: _name(rid, entries))
            found.append(_observed("fire-together", ids, entries, len(together)))
    return {
        "enabled": enabled(control),
        "traced": {"sessions": len(last_call), "calls": calls, "errors": errors},
        "observations": found,
    }


SUGGESTIONS = {
    "never-matched": "No recall has shown it: retire it, or give it queries a prompt uses.",
    "not-acted-on": "Shown often, and no tool call ever followed it: narrow its queries, "
    "or retire it.",
    "fire-together": "Always shown in the same sessions: merge them, or make one more specific.",
}


def _observed(
    what: str, ids: list[str], entries: dict[str, dict[str, Any]], sessions: int | None = None
) -> dict[str, Any]:
    """One observation: what, about which entries, in how many sessions, and a
    suggestion (never acted on by xbrain)."""
    about = [{"id": rid, "name": entries[rid]["name"], "kind": entries[rid]["kind"]} for rid in ids]
    out: dict[str, Any] = {"type": what, "entries": about}
    if sessions is not None:
        out["sessions"] = sessions
    out["suggestion"] = SUGGESTIONS[what]
    return out


def _name(rid: str, entries: dict[str, dict[str, Any]]) -> str:
    """An entry's name, to order by."""
    return str(entries[rid]["name"])
