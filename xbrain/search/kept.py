"""Read connections a long-lived process keeps open across requests (``xbrain serve``).

A fresh process opens an index, ranks and closes it; SQLite's page cache goes with the
connection, so every request of a server read the same index pages again, and each
close of the last connection checkpointed and removed the WAL files the next open made
anew. A server keeps one read-only connection per index file instead, with a larger
cache. Nothing else changes: each request still opens its own read transaction and
checks there that the index reflects ``main`` (:mod:`.freshness`), and ends it after,
so a commit made since is seen. An index file that was replaced (a rebuild removes it
and writes a new one) is a new file: its connection is opened anew.

Beside each connection a server keeps what was computed from it (:func:`memo`,
:func:`held`), and work a request asked for that can wait until no request does
(:func:`later`, run by :func:`idle`: reading a team layer's postings into memory).
A kept file that is gone (a team removed) or replaced and not read since is let go by
:func:`idle`, with what was kept beside it: a server lives long.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["CACHE_KIB", "held", "idle", "keep_warm", "later", "memo", "reader", "release"]

CACHE_KIB = 64 * 1024  # per kept index: the 10,000-resource index is some 32 MB

_KEPT: dict[str, tuple[tuple[int, int], sqlite3.Connection, dict[Any, Any]]] | None = None
_HELD: dict[str, dict[Any, Any]] = {}  # per kept file, beside its memo (:func:`held`)
# (index path, what) -> the work to do on its kept connection once no request waits
_LATER: dict[tuple[str, str], Callable[[sqlite3.Connection], None]] = {}
SWEEP_EVERY = 5.0  # seconds between idle checks for kept files that are gone
_SWEPT = [0.0]  # when the last check ran (monotonic)


def keep_warm() -> None:
    """From now on, :func:`reader` keeps connections open (a long-lived server)."""
    global _KEPT
    if _KEPT is None:
        _KEPT = {}


def reader(path: Path) -> sqlite3.Connection | None:
    """A kept read-only connection to the index at ``path``, outside any transaction;
    None when this process keeps none (a fresh command opens its own) or the file is
    not there."""
    if _KEPT is None:
        return None
    try:
        info = os.stat(path)
    except OSError:
        return None
    key, identity = str(path), (info.st_dev, info.st_ino)
    kept = _KEPT.get(key)
    if kept is not None and kept[0] == identity:
        return kept[1]
    if kept is not None:
        del _KEPT[key]
        kept[1].close()
    conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, timeout=10, isolation_level=None)
    conn.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
    _KEPT[key] = (identity, conn, {})
    _HELD[key] = {}
    return conn


def memo(conn: sqlite3.Connection) -> dict[Any, Any] | None:
    """A dict kept beside ``conn`` while it is kept (dropped with it when its file is
    replaced), for what the caller computed from it; None when ``conn`` is not a kept
    one. What goes in must be keyed by what it was computed from (``PRAGMA
    data_version`` within a read transaction: another connection's commit changes it)."""
    for _, kept, memos in (_KEPT or {}).values():
        if kept is conn:
            return memos
    return None


def held(conn: sqlite3.Connection) -> dict[Any, Any] | None:
    """A second dict kept beside ``conn`` (as :func:`memo`, never cleared by it), for
    what is costly to compute again; None when ``conn`` is not a kept one."""
    for path, (_, kept, _) in (_KEPT or {}).items():
        if kept is conn:
            return _HELD.setdefault(path, {})
    return None


def later(conn: sqlite3.Connection, what: str, work: Callable[[sqlite3.Connection], None]) -> None:
    """Run ``work`` on the kept connection of ``conn``'s file (the one kept then: the
    file may be replaced meanwhile) at the next :func:`idle`; once per ``what``."""
    for path, (_, kept, _) in (_KEPT or {}).items():
        if kept is conn:
            _LATER[(path, what)] = work


def idle() -> bool:
    """Do the work requests asked for (:func:`later`), while none waits; whether any
    was done. A failure of one is left for the request that asks again."""
    if time.monotonic() - _SWEPT[0] >= SWEEP_EVERY:
        _SWEPT[0] = time.monotonic()
        _sweep()
    done = False
    while _LATER:
        (path, _), work = _LATER.popitem()
        conn = reader(Path(path))
        if conn is not None:
            done = True
            try:
                work(conn)
            except Exception:  # never the server's end: the request ranks by SQL alone
                release(conn)
    return done


def _sweep() -> None:
    """Close the kept connections whose file is gone or is another file now, and drop
    what was kept or asked for beside them (a team's arrays: megabytes)."""
    for key, (identity, conn, _) in list((_KEPT or {}).items()):
        try:
            info = os.stat(key)
        except OSError:
            info = None
        if info is not None and (info.st_dev, info.st_ino) == identity:
            continue
        if _KEPT is not None:
            del _KEPT[key]
        _HELD.pop(key, None)
        for asked in [asked for asked in _LATER if asked[0] == key]:
            del _LATER[asked]
        conn.close()


def release(conn: sqlite3.Connection) -> None:
    """End a kept connection's read transaction (it stays open for the next request)."""
    if conn.in_transaction:
        conn.execute("ROLLBACK")
