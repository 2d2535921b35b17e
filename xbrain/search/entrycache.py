"""What recall needs of every entry, tokenized once: ``.git/xbrain/entries.sqlite``.

Derived data like the search index: it records the commit it reflects, is rebuilt from
the committed entries when it does not reflect ``main`` (:mod:`.freshness`; or when it is
missing or damaged), and is brought along by each commit's hook that changed an entry
(only the entries the commit changed are tokenized again). It holds each entry's fields
with the terms of its queries, keywords, name and description, and a posting list of
every term an entry holds (body included), so a recall reads only the entries that
share a term with the prompt — and no git. The entries with ``paths`` also hold
``PATHS_TERM``, which routing by a file asks for. ``link`` (superseded id,
active superseding id, its ``validFrom``; read whole) lets recall hide what was
superseded by the date it answers for.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from ..sqlitefiles import DAMAGED, insert_rows, remove_database, unsynced_commits
from .entryloaded import Candidates, Loaded, links_of
from .freshness import reflects
from .stems import marked
from .tokenize import Tokenizer

__all__ = [
    "CACHE_FILE",
    "PATHS_TERM",
    "VERSION",
    "Candidates",
    "bodies",
    "build",
    "cache_meta",
    "candidates",
    "keep_warm",
    "listed",
    "rebuild",
    "update",
]

CACHE_FILE = Path("xbrain") / "entries.sqlite"
VERSION = "8"  # 4: paths and their PATHS_TERM posting; 5: the facts' fields and ``link``;
# 6: status is status_of (memex's legacy RETIRED description), caseSensitive; 7: the
# straddling Chinese words in the held terms (``周四`` in ``每周四``); 8: ``df``
_KEPT = (  # the body is kept apart: read only for the entries recall shows
    "id",
    "kind",
    "name",
    "scope",
    "description",
    "oneLiner",
    "paths",
    "events",
    "boost",
    "alwaysOn",
    "status",
    "trust",
    "provenance",
    "updatedAt",
)
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)",
    "CREATE TABLE IF NOT EXISTS entry (i INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL,"
    " data TEXT NOT NULL, body TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS posting (term TEXT NOT NULL, i INTEGER NOT NULL,"
    " PRIMARY KEY (term, i)) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS link (old TEXT NOT NULL, new TEXT NOT NULL,"
    " since TEXT NOT NULL, PRIMARY KEY (old, new)) WITHOUT ROWID",
    # how many entries hold each term, kept with the postings: a prompt's scoring needs it
    # for every term of every entry it touches (counting the postings of some 900 terms
    # was half of a fresh English recall's entry leg)
    "CREATE TABLE IF NOT EXISTS df (term TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID",
)
_FACTS = ("supersedes", "validFrom", "validUntil", "proposedBy")  # only when there
# The posting for "this entry has paths" (no token ever holds a NUL): routing by a file
# (recall's ``pathroute``) asks for it.
PATHS_TERM = "\x00paths"


def prepared(
    entry: dict[str, Any], tokenizer: Tokenizer, bulk: bool = False
) -> tuple[dict[str, Any], set[str]]:
    """An entry as recall keeps it (fields and the terms it matches on), and every term
    it holds (``bulk``: part of a whole build)."""
    from ..codec import digest
    from ..kinds.entry import status_of

    kept = {key: entry[key] for key in _KEPT}
    kept.update((key, entry[key]) for key in _FACTS if key in entry)
    kept["status"] = status_of(entry)
    kept["caseSensitive"] = entry.get("caseSensitive", False)
    kept["revision"] = digest(entry)[:16]
    kept["queries"] = [[q, tokenizer.query_terms(q)] for q in entry["queries"]]
    kept["keywords"] = [[k, tokenizer.query_terms(k)] for k in entry["keywords"]]
    kept["about"] = tokenizer.query_terms(f"{entry['name']} {entry['description']}")
    text = f"{entry['name']} {entry['description']} {entry['body']}"
    held = set(tokenizer.counts(text, bulk))
    held |= {t for _, terms in kept["queries"] + kept["keywords"] for t in terms}
    held |= set(kept["about"])
    held |= marked(held)  # each English word's stem too: recall matches other forms
    if entry["paths"]:
        held.add(PATHS_TERM)  # what routing by a file reads: the entries with paths
    return kept, held


def _connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(str(path), timeout=10, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")  # derived data: rebuilt if lost
    for statement in _SCHEMA:
        conn.execute(statement)
    return conn


_UPSERT = sqlite3.sqlite_version_info >= (3, 24, 0)


def _put(
    conn: sqlite3.Connection, entry: dict[str, Any], tokenizer: Tokenizer, bulk: bool = False
) -> None:
    _drop(conn, entry["id"])
    kept, held = prepared(entry, tokenizer, bulk)
    cursor = conn.execute(
        "INSERT INTO entry (id, data, body) VALUES (?, ?, ?)",
        (entry["id"], json.dumps(kept, ensure_ascii=False, separators=(",", ":")), entry["body"]),
    )
    # (a statement each, not one a term: see ``insert_rows``)
    insert_rows(conn, "INSERT INTO posting", [(t, cursor.lastrowid) for t in held])
    if not bulk and _UPSERT:  # a whole build counts every term at its end
        upsert = "ON CONFLICT (term) DO UPDATE SET n = n + 1"
        insert_rows(conn, "INSERT INTO df (term, n)", [(t, 1) for t in held], upsert)
    elif not bulk:  # (an SQLite before 3.24: no upsert)
        conn.executemany("INSERT OR IGNORE INTO df VALUES (?, 0)", [(t,) for t in held])
        conn.executemany("UPDATE df SET n = n + 1 WHERE term = ?", [(t,) for t in held])
    if entry["status"] == "active":  # only what is in force supersedes
        since = entry.get("validFrom", "")
        rows = [(old, entry["id"], since) for old in entry.get("supersedes", ())]
        conn.executemany("INSERT OR REPLACE INTO link VALUES (?, ?, ?)", rows)


def _drop(conn: sqlite3.Connection, rid: str) -> None:
    conn.execute("DELETE FROM link WHERE new = ?", (rid,))
    row = conn.execute("SELECT i FROM entry WHERE id = ?", (rid,)).fetchone()
    if row is not None:
        conn.execute(
            "UPDATE df SET n = n - 1 WHERE term IN (SELECT term FROM posting WHERE i = ?)", row
        )
        conn.execute(  # only this entry's terms can have reached 0: no scan of the table
            "DELETE FROM df WHERE n <= 0 AND term IN (SELECT term FROM posting WHERE i = ?)", row
        )
        conn.execute("DELETE FROM posting WHERE i = ?", row)
        conn.execute("DELETE FROM entry WHERE i = ?", row)


def build(
    control: Path,
    commit: str,
    entries: list[dict[str, Any]],
    tokenizer: Tokenizer,
    defaults: dict[str, Any],
) -> None:
    """Rebuild the cache for ``commit`` from every committed entry (``defaults``: recall's
    defaults from that commit's ``xbrain.yaml``)."""
    path = control / CACHE_FILE
    path.parent.mkdir(mode=0o700, exist_ok=True)
    try:
        conn = _connect(path)
    except sqlite3.OperationalError:
        raise  # locked, read-only, a full disk: not damage, and not ours to delete
    except sqlite3.DatabaseError:  # damaged: it is derived data, start over
        remove_database(path)
        conn = _connect(path)
    try:
        _fill(conn, commit, entries, tokenizer, defaults)
    finally:
        conn.close()


def _fill(
    conn: sqlite3.Connection,
    commit: str,
    entries: list[dict[str, Any]],
    tokenizer: Tokenizer,
    defaults: dict[str, Any],
) -> None:
    try:
        conn.execute("BEGIN IMMEDIATE")
        for table in ("posting", "entry", "meta", "link", "df"):  # an older shape goes too
            conn.execute(f"DROP TABLE IF EXISTS {table}")
        for statement in _SCHEMA:
            conn.execute(statement)
        for entry in entries:
            _put(conn, entry, tokenizer, bulk=True)
        conn.execute("INSERT INTO df SELECT term, COUNT(*) FROM posting GROUP BY term")
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('version', ?)", (VERSION,))
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('commit', ?)", (commit,))
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('recall', ?)", (json.dumps(defaults),))
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def rebuild(store_dir: Path, tokenizer: Tokenizer) -> str | None:
    """Rebuild the cache from every entry committed on ``main``; the commit it reflects
    (None: an empty store)."""
    from .. import kinds  # noqa: F401  (registers the entry kind)
    from ..core import Core, bulk, private_umask

    core = Core(store_dir)
    with core.reading() as view, core.git() as git, private_umask():
        if view is None or view.snap.commit is None:
            return None
        records = list(bulk.records(git, view, "entry"))
        defaults = view.config().recall_settings()
        commit: str = view.snap.commit
        control = store_dir / ".git"
        try:
            build(control, commit, records, tokenizer, defaults)
        except (sqlite3.OperationalError, OSError):
            # the cache cannot be written (a read-only store, a full disk): this process
            # keeps one in memory instead, as search does
            memory = sqlite3.connect(":memory:", isolation_level=None)
            _fill(memory, commit, records, tokenizer, defaults)
            _MEMORY[control] = (commit, memory)
    return commit


def update(
    control: Path,
    parent: str | None,
    commit: str,
    changed: dict[str, dict[str, Any] | None],
    tokenizer: Tokenizer,
    defaults: dict[str, Any] | None = None,
) -> None:
    """Bring a cache that reflected ``parent`` to ``commit`` (``changed``: id → the entry
    now, or None when it is gone; ``defaults``: recall's defaults when the commit changed
    them). A missing cache, or one at another commit, is left for the next recall."""
    path = control / CACHE_FILE
    if parent is None or not path.is_file():
        return
    conn = _connect(path)
    try:
        with unsynced_commits(conn):
            meta = dict(conn.execute("SELECT key, value FROM meta"))
            if meta.get("version") != VERSION or not reflects(path, meta.get("commit"), parent):
                return  # nothing written
            for rid, entry in changed.items():
                if entry is None:
                    _drop(conn, rid)
                else:
                    _put(conn, entry, tokenizer)
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('commit', ?)", (commit,))
            if defaults is not None:
                conn.execute(
                    "INSERT OR REPLACE INTO meta VALUES ('recall', ?)", (json.dumps(defaults),)
                )
    finally:
        conn.close()


_WARM: dict[Path, tuple[str, Loaded]] | None = None  # xbrain serve: the cache in memory
# caches that could not be written to their file: (commit, connection), this process only
_MEMORY: dict[Path, tuple[str, sqlite3.Connection]] = {}


def keep_warm() -> None:
    """Hold the cache in memory across calls, reloaded when it moves to another commit
    (a long-lived server; a fresh process reads only the rows a prompt needs)."""
    global _WARM
    if _WARM is None:
        _WARM = {}


def cache_meta(head: str) -> dict[str, str]:
    """What the entry cache's ``meta`` holds when it reflects commit ``head``."""
    return {"version": VERSION, "commit": head}


def listed(
    control: Path, brief: Callable[[Iterable[dict[str, Any]]], list[dict[str, Any]]]
) -> list[dict[str, Any]] | None:
    """``brief`` of every entry (``xbrain entry list``'s filter and fields) from a cache
    that reflects ``main`` right now; None when the cache cannot say (missing, at
    another commit, damaged: a row ``brief`` cannot read is damage too)."""
    from .query import read_current

    def read(conn: sqlite3.Connection) -> list[dict[str, Any]]:
        return brief(json.loads(text) for (text,) in conn.execute("SELECT data FROM entry"))

    return read_current(control, CACHE_FILE, cache_meta, read)


def candidates(control: Path, head: str, terms: set[str]) -> Candidates | None:
    """Read the candidates for ``terms`` when the cache reflects ``head``, else None."""
    from .query import open_current

    memory = _MEMORY.get(control)
    if memory is not None:
        if memory[0] == head:
            return _read(memory[1], terms)
        del _MEMORY[control]  # a commit since: the file, or a new build, answers now
        memory[1].close()
    conn = open_current(control / CACHE_FILE, cache_meta(head))
    if conn is None:
        return None
    if _WARM is not None:
        try:  # kept by the commit it records: a note (freshness) keeps it loaded
            (recorded,) = conn.execute("SELECT value FROM meta WHERE key = 'commit'").fetchone()
            loaded = _WARM.get(control)
            if loaded is None or loaded[0] != recorded:
                loaded = _WARM[control] = (str(recorded), Loaded(conn))
            return loaded[1].candidates(terms)
        except DAMAGED:  # a rebuild follows
            return None
        finally:
            conn.close()
    try:
        return _read(conn, terms)
    except DAMAGED:  # a rebuild follows
        return None
    finally:
        conn.close()


def _read(conn: sqlite3.Connection, terms: set[str]) -> Candidates:
    """The candidates for ``terms`` from an open cache."""
    listed = sorted(terms)
    held: dict[int, set[str]] = {}
    for start in range(0, len(listed), 500):
        chunk = listed[start : start + 500]
        rows = conn.execute(
            f"SELECT term, i FROM posting WHERE term IN ({', '.join('?' * len(chunk))})",
            chunk,
        )
        for term, i in rows:
            held.setdefault(i, set()).add(term)
    entries = []
    for i, data in conn.execute(
        f"SELECT i, data FROM entry WHERE i IN ({', '.join('?' * len(held))})", list(held)
    ):
        entries.append((json.loads(data), held[i]))
    needed = sorted(
        {t for e, _ in entries for _, ts in e["queries"] + e["keywords"] for t in ts}
        | {t for e, _ in entries for t in e["about"]}
        | terms
    )
    df: dict[str, int] = {}
    for start in range(0, len(needed), 500):
        chunk = needed[start : start + 500]
        df.update(
            conn.execute(
                f"SELECT term, n FROM df WHERE term IN ({', '.join('?' * len(chunk))})", chunk
            )
        )
    (n,) = conn.execute("SELECT COUNT(*) FROM entry").fetchone()
    row = conn.execute("SELECT value FROM meta WHERE key = 'recall'").fetchone()
    defaults = json.loads(row[0] if row else "{}")
    kept = defaults if isinstance(defaults, dict) else {}
    return Candidates(entries, df, int(n), kept, links_of(conn))


def bodies(control: Path, ids: list[str]) -> dict[str, str]:
    """The bodies of the entries ``ids`` (read after choosing what to show)."""
    if not ids:
        return {}
    query = f"SELECT id, body FROM entry WHERE id IN ({', '.join('?' * len(ids))})"
    memory = _MEMORY.get(control)
    if memory is not None:
        return {rid: str(body) for rid, body in memory[1].execute(query, ids)}
    conn = sqlite3.connect(f"file:{control / CACHE_FILE}?mode=ro", uri=True, timeout=10)
    try:
        return {rid: str(body) for rid, body in conn.execute(query, ids)}
    finally:
        conn.close()
