"""A team layer's derived file (:mod:`.derived`) read by key: what a prompt needs of it
without parsing all of it.

``team-layer.json`` holds every record's provenance: 1.7 MB on a team of 10,000
resources, some 10 ms of JSON to parse on every prompt of a fresh process, for the
provenance of the three or six team records the prompt shows. Beside it this keeps
``team-layer.sqlite``: the same fields, and the provenance as one row per record, for the
file it was copied from (its inode, modification time and size: the file is always
replaced, never written in place). A read whose copy matches answers from it; otherwise
it parses the file once, as before, and writes the copy for the next process (nothing is
written where the folder takes no file). The file stays the source; the copy is derived.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from collections.abc import Iterator, Mapping
from typing import Any

from .derived import layer_file, read_layer

__all__ = ["COPY", "read_keyed"]

COPY = "team-layer.sqlite"
_VERSION = "1"


class Provenance(Mapping[str, Any]):
    """Record key → ``[committer, epoch, commit]``, read from the copy when asked (the
    connection its fields were read with: the same file, even once it is replaced)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn  # a team layer's thread, or the caller's: one at a time

    def _rows(self, sql: str, *args: Any) -> list[Any]:
        return self._conn.execute(sql, args).fetchall()

    def __getitem__(self, key: str) -> Any:
        try:
            rows = self._rows("SELECT value FROM provenance WHERE key = ?", key)
        except sqlite3.Error:
            rows = []
        if not rows:
            raise KeyError(key)
        return json.loads(rows[0][0])

    def __iter__(self) -> Iterator[str]:
        return iter([key for (key,) in self._rows("SELECT key FROM provenance ORDER BY key")])

    def __len__(self) -> int:
        return int(self._rows("SELECT COUNT(*) FROM provenance")[0][0])


def _stamp(path: str) -> str | None:
    """The derived file's identity (inode, modification time, size), not following a link."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        seen = os.fstat(fd)
    finally:
        os.close(fd)
    return f"{seen.st_ino}:{seen.st_mtime_ns}:{seen.st_size}"


_kept: dict[str, tuple[str, dict[str, Any]]] = {}  # copy path → (the stamp, its value)


def _read_copy(copy: str, stamp: str) -> dict[str, Any] | None:
    kept = _kept.get(copy)
    if kept is not None and kept[0] == stamp:
        return kept[1]
    try:
        conn = sqlite3.connect(f"file:{copy}?mode=ro", uri=True, check_same_thread=False)
    except sqlite3.Error:
        return None
    try:
        meta = dict(conn.execute("SELECT key, value FROM meta"))
        fields = dict(conn.execute("SELECT key, value FROM fields"))
        if meta != {"stamp": stamp, "version": _VERSION}:
            raise ValueError("the copy of an older file, or of another layout")
        value = {key: json.loads(text) for key, text in fields.items()}
    except (sqlite3.Error, ValueError):
        conn.close()
        return None
    value["provenance"] = Provenance(conn)
    _kept[copy] = (stamp, value)
    return value


def _write_copy(copy: str, stamp: str, value: dict[str, Any]) -> None:
    """Write the copy of ``value`` (the file with ``stamp``) in place of any older one."""
    temp = f"{copy}.{os.getpid()}.tmp"
    provenance = value.get("provenance")
    if not isinstance(provenance, dict):
        return
    with contextlib.suppress(OSError, sqlite3.Error, TypeError, ValueError):
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        os.close(fd)
        with contextlib.closing(sqlite3.connect(temp, isolation_level=None)) as conn:
            conn.execute("PRAGMA journal_mode = OFF")
            conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
            conn.execute("CREATE TABLE fields (key TEXT PRIMARY KEY, value TEXT)")
            conn.execute("CREATE TABLE provenance (key TEXT PRIMARY KEY, value TEXT)")
            rows = [(k, json.dumps(v)) for k, v in value.items() if k != "provenance"]
            conn.execute("BEGIN")
            meta = [("stamp", stamp), ("version", _VERSION)]
            conn.executemany("INSERT INTO meta VALUES (?, ?)", meta)
            conn.executemany("INSERT INTO fields VALUES (?, ?)", rows)
            conn.executemany(
                "INSERT INTO provenance VALUES (?, ?)",
                ((str(k), json.dumps(v)) for k, v in provenance.items()),
            )
            conn.execute("COMMIT")
        os.replace(temp, copy)
    with contextlib.suppress(OSError):
        os.unlink(temp)


def read_keyed(store: str, head: str | None) -> dict[str, Any] | None:
    """The layer's derived file as :func:`.derived.read_layer` reads it (None when it was
    not worked out at ``head``), its ``provenance`` a mapping read by key from the copy."""
    path = layer_file(store)
    copy = os.path.join(os.path.dirname(path), COPY)
    stamp = _stamp(path)
    if stamp is None or head is None:
        return None
    found = _read_copy(copy, stamp)
    if found is None:
        found = read_layer(store, head)  # parsed whole, once per change of the file
        if found is not None and _stamp(path) == stamp:  # not replaced meanwhile
            _write_copy(copy, stamp, found)
            _kept[copy] = (stamp, found)
        return found
    return found if found.get("commit") == head else None
