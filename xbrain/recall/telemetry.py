"""Local recall telemetry: which entries earn their place (SPEC §13).

A private SQLite database, ``.git/xbrain/telemetry.sqlite`` (0600, never committed,
never sent anywhere), with one row per item a recall showed: when, in which session and
on which hook event, how it was disclosed, and — for an entry — which of its own
queries or keywords matched. It never holds prompt text. A session is kept by the name
its state file has (``session.file_name``: the id, or a digest of an id that is not a
plain name), so a payload's id of any length stays a short key. ``report`` answers per
entry (matches, sessions, first and last match, hits per query), per session (the
trace: what was shown and, from ``PostToolUse``, which tools were called with what
outcome — ``recall.traces``), and which active entries never matched (candidates to
retire).
``.git/xbrain/telemetry-off`` switches recording off on this device; ``clear`` erases
what was recorded.
"""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path
from typing import Any

from ..sqlitefiles import remove_database
from .session import file_name

__all__ = [
    "OFF_FILE",
    "TELEMETRY_FILE",
    "check",
    "clear",
    "connect",
    "enabled",
    "keep_open",
    "overview",
    "reader",
    "record",
    "report",
    "set_enabled",
]

TELEMETRY_FILE = Path("xbrain") / "telemetry.sqlite"
OFF_FILE = Path("xbrain") / "telemetry-off"
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS shown (time REAL NOT NULL, session TEXT, event TEXT,"
    " id TEXT NOT NULL, kind TEXT NOT NULL, disclosure TEXT NOT NULL, via TEXT, query TEXT)",
    "CREATE INDEX IF NOT EXISTS shown_id ON shown (id)",
    "CREATE INDEX IF NOT EXISTS shown_session ON shown (session)",
    # execution traces (recall.traces): each tool call's name and outcome, never its text
    "CREATE TABLE IF NOT EXISTS tool (time REAL NOT NULL, session TEXT NOT NULL,"
    " tool TEXT NOT NULL, outcome TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS tool_session ON tool (session, time)",
)


def enabled(control: Path) -> bool:
    """Whether this device records telemetry (on unless switched off)."""
    return not (control / OFF_FILE).exists()


def set_enabled(control: Path, on: bool) -> None:
    """Switch recording on or off on this device (nothing recorded is deleted)."""
    marker = control / OFF_FILE
    if on:
        marker.unlink(missing_ok=True)
    else:
        marker.parent.mkdir(mode=0o700, exist_ok=True)
        marker.touch(mode=0o600)


def _connect(control: Path) -> sqlite3.Connection:
    path = control / TELEMETRY_FILE
    old = os.umask(0o077)  # the database and its WAL files are private
    try:
        path.parent.mkdir(mode=0o700, exist_ok=True)
        conn = sqlite3.connect(str(path), timeout=10, isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL")
        # counts, not records: a crash loses none, and no prompt waits for an fsync. Not
        # even NORMAL: the last connection's close checkpoints the WAL, and with NORMAL
        # that synced the WAL, its folder and the database — four fsyncs on every recall
        # that showed something (3-20 ms on a busy disk). A power cut may lose the last
        # rows, or leave the database damaged: ``doctor --repair`` removes it then.
        conn.execute("PRAGMA synchronous=OFF")
        for statement in _SCHEMA:
            conn.execute(statement)
    finally:
        os.umask(old)
    return conn


def record(
    control: Path, session: str | None, event: str | None, results: list[dict[str, Any]]
) -> None:
    """Note what one recall showed (ids, kinds, disclosure, the entry's matched query)."""
    if not results or not enabled(control):
        return
    now, key = time.time(), file_name(session) if session else None
    rows = [
        (
            now,
            key,
            event,
            item["id"],
            item["kind"],
            item["disclosure"],
            item["why"].get("via"),
            _matched(item["why"]),
        )
        for item in results
    ]
    insert = "INSERT INTO shown VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
    if _OPEN is not None:
        kept = _kept(control)
        try:
            kept.executemany(insert, rows)
        except sqlite3.Error:
            _OPEN.pop(str(control), None)
            kept.close()
            raise
        return
    conn = _connect(control)
    try:
        conn.executemany(insert, rows)
    finally:
        conn.close()


# a long-lived server's open connection per store: (the file's device and inode, it)
_OPEN: dict[str, tuple[tuple[int, int], sqlite3.Connection]] | None = None


def keep_open() -> None:
    """From now on :func:`record` keeps its connection open (``xbrain serve``): opening
    it, setting it up and closing it again (a checkpoint) was a third of a millisecond
    of every served prompt. A database removed or replaced since (``clear`` keeps the
    file; ``doctor --repair`` removes a damaged one) is opened anew."""
    global _OPEN
    if _OPEN is None:
        _OPEN = {}


def _kept(control: Path) -> sqlite3.Connection:
    assert _OPEN is not None
    path = control / TELEMETRY_FILE
    held = _OPEN.get(str(control))
    if held is not None:
        try:
            info = os.stat(path)
        except OSError:
            info = None
        if info is not None and held[0] == (info.st_dev, info.st_ino):
            return held[1]
        del _OPEN[str(control)]
        held[1].close()
    conn = _connect(control)
    try:
        info = os.stat(path)
    except OSError:
        conn.close()
        raise
    _OPEN[str(control)] = ((info.st_dev, info.st_ino), conn)
    return conn


def _matched(why: dict[str, Any]) -> str | None:
    """Which of the entry's own texts matched: a query, a keyword or a ``paths`` glob."""
    if why.get("via") in ("query", "keyword"):
        return str(why.get("query"))
    return str(why.get("glob")) if why.get("via") == "path" else None


def clear(control: Path) -> int:
    """Erase everything recorded on this device; the number of rows erased. Recording
    stays on or off as it was. The rows are overwritten, not only unlinked
    (``secure_delete``, then ``VACUUM`` and a truncating checkpoint), so no free page and
    no WAL frame keeps them. Deleting the files instead could pair a recall's open
    database with a new WAL file; SQLite's own locking keeps this safe beside one. A
    damaged database, which nobody can read or write, is deleted whole."""
    path = control / TELEMETRY_FILE
    if not path.exists():
        return 0
    try:
        conn = _connect(control)
        try:
            conn.execute("PRAGMA secure_delete=ON")
            count = conn.execute("DELETE FROM shown").rowcount
            count += conn.execute("DELETE FROM tool").rowcount
            conn.execute("VACUUM")
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            conn.close()
    except sqlite3.OperationalError as exc:  # a read-only store, a full disk
        from ..errors import XbrainError

        raise XbrainError(f"Cannot erase the telemetry here: {exc}.") from None
    except sqlite3.DatabaseError:  # damaged: nothing in it can be read, so it goes whole
        remove_database(path)
        return 0
    return int(count)


def check(
    git: Any, repair: bool, problems: list[dict[str, Any]], repaired: list[dict[str, Any]]
) -> None:
    """``doctor``: a damaged telemetry database (every recall then records nothing) is
    reported, and with ``repair`` deleted (it holds nothing anyone can read)."""
    from ..search.query import damaged

    control: Path = git.control_dir
    path = control / TELEMETRY_FILE
    if not path.exists() or not damaged(path, "SELECT COUNT(*) FROM shown"):
        return
    rel = str(path.relative_to(git.path))
    if repair:
        clear(control)
        repaired.append({"code": "telemetry", "message": "Damaged telemetry removed.", "path": rel})
    else:
        message = "The local telemetry database is damaged (recall records nothing)."
        problems.append({"code": "telemetry", "message": message, "path": rel})


def report(
    control: Path,
    entries: dict[str, dict[str, Any]],
    *,
    session: str | None = None,
    unused: bool = False,
) -> dict[str, Any]:
    """Per entry, per session, or the active entries never matched (``entries``: id →
    ``{name, kind, status}`` of the current entries)."""
    out: dict[str, Any] = {"enabled": enabled(control)}
    path = control / TELEMETRY_FILE
    try:
        return _report(_reader(control) if path.exists() else None, entries, session, unused, out)
    except sqlite3.OperationalError:
        raise
    except sqlite3.DatabaseError:
        from ..errors import CorruptStoreError

        raise CorruptStoreError(
            "The local telemetry database is damaged (.git/xbrain/telemetry.sqlite); "
            "xbrain telemetry --clear starts it anew."
        ) from None


def _report(
    conn: sqlite3.Connection | None,
    entries: dict[str, dict[str, Any]],
    session: str | None,
    unused: bool,
    out: dict[str, Any],
) -> dict[str, Any]:
    try:
        if session is not None:
            rows = (
                []
                if conn is None
                else conn.execute(
                    "SELECT time, event, id, kind, disclosure FROM shown WHERE session = ? "
                    "ORDER BY time, rowid",
                    (file_name(session),),
                ).fetchall()
            )
            out["session"] = session
            out["trace"] = [
                {"time": _iso(t), "event": e, "id": i, "kind": k, "disclosure": d}
                for t, e, i, k, d in rows
            ]
            calls = [] if conn is None else _tools(conn, file_name(session))
            out["tools"] = [{"time": _iso(t), "tool": n, "outcome": o} for t, n, o in calls]
            return out
        stats: dict[str, dict[str, Any]] = {}
        if conn is not None:
            for rid, matches, sessions, first, last in conn.execute(
                "SELECT id, COUNT(*), COUNT(DISTINCT session), MIN(time), MAX(time) "
                "FROM shown GROUP BY id"
            ):
                stats[rid] = {
                    "id": rid,
                    "matches": matches,
                    "sessions": sessions,
                    "first": _iso(first),
                    "last": _iso(last),
                    "queries": {},
                }
            for rid, query, hits in conn.execute(
                "SELECT id, query, COUNT(*) FROM shown WHERE query IS NOT NULL GROUP BY id, query"
            ):
                stats[rid]["queries"][query] = hits
        if unused:
            out["unused"] = sorted(
                (
                    {"id": rid, "name": e["name"], "kind": e["kind"]}
                    for rid, e in entries.items()
                    if e["status"] == "active" and rid not in stats
                ),
                key=lambda item: (item["kind"], item["name"]),
            )
            return out
        for rid, item in stats.items():
            if rid in entries:
                item["name"] = entries[rid]["name"]
        out["entries"] = sorted(stats.values(), key=lambda item: (-item["matches"], item["id"]))
        return out
    finally:
        if conn is not None:
            conn.close()


def overview(control: Path, *, days: int = 30, sessions: int = 10) -> dict[str, Any]:
    """What ``xbrain ui`` draws: per item, its matches on each of the last ``days`` days
    (UTC dates), and the last ``sessions`` sessions with what each was shown and why (the
    matched query or glob); a damaged or missing database has none of either."""
    out: dict[str, Any] = {"enabled": enabled(control), "daily": {}, "sessions": []}
    conn = reader(control)
    if conn is None:
        return out
    since = time.time() - days * 86400
    try:
        daily: dict[str, dict[str, int]] = out["daily"]
        for rid, day, count in conn.execute(
            "SELECT id, date(time, 'unixepoch'), COUNT(*) FROM shown WHERE time >= ? "
            "GROUP BY id, date(time, 'unixepoch')",
            (since,),
        ):
            daily.setdefault(rid, {})[day] = count
        recent = conn.execute(
            "SELECT session, MAX(time) AS last FROM shown WHERE session IS NOT NULL "
            "GROUP BY session ORDER BY last DESC LIMIT ?",
            (sessions,),
        ).fetchall()
        for key, last in recent:
            rows = conn.execute(
                "SELECT time, event, id, kind, disclosure, via, query FROM shown "
                "WHERE session = ? ORDER BY time, rowid LIMIT 200",
                (key,),
            ).fetchall()
            shown = [
                {"time": _iso(t), "event": e, "id": i, "kind": k, "disclosure": d, "via": v}
                | ({"matched": q} if q is not None else {})
                for t, e, i, k, d, v, q in rows
            ]
            out["sessions"].append({"session": key, "last": _iso(last), "shown": shown})
    except sqlite3.DatabaseError:
        return {**out, "daily": {}, "sessions": []}
    finally:
        conn.close()
    return out


def connect(control: Path) -> sqlite3.Connection:
    """The telemetry database, opened for writing (created private when missing)."""
    return _connect(control)


def reader(control: Path) -> sqlite3.Connection | None:
    """The telemetry database to report from (read-only when the store cannot be
    written); None when it is missing or cannot be read."""
    return _reader(control) if (control / TELEMETRY_FILE).exists() else None


def _tools(conn: sqlite3.Connection, key: str) -> list[tuple[float, str, str]]:
    """The tool calls a session's trace recorded (none in a database from before them)."""
    try:
        query = "SELECT time, tool, outcome FROM tool WHERE session = ? ORDER BY time, rowid"
        return conn.execute(query, (key,)).fetchall()
    except sqlite3.OperationalError:  # read-only, from before traces: no such table
        return []


def _reader(control: Path) -> sqlite3.Connection | None:
    """The database to report from. On a store that cannot be written (mounted read-only)
    it is opened read-only, and failing that as an immutable file (what is in its WAL
    then goes unread); None when it cannot be read at all."""
    try:
        return _connect(control)
    except sqlite3.OperationalError:
        pass
    uri = (control / TELEMETRY_FILE).as_uri()
    for mode in ("mode=ro", "immutable=1"):
        conn = sqlite3.connect(f"{uri}?{mode}", uri=True)
        try:
            conn.execute("SELECT COUNT(*) FROM shown").fetchone()
            return conn
        except sqlite3.Error:
            conn.close()
    return None


def _iso(moment: float) -> str:
    from datetime import datetime, timezone

    from ..timestamps import format_timestamp

    return format_timestamp(datetime.fromtimestamp(moment, timezone.utc))
