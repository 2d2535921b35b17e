"""The derived search index: BM25F postings in SQLite, keyed by the commit they reflect.

The index lives in ``.git/xbrain/search.sqlite`` and is never the only copy of anything:
it is built from committed resources, records the commit it reflects, and is brought up
to date (incrementally, from the tree diff) or rebuilt whenever that commit is not the
one being searched. A write updates it in the same locked transaction as its commit.

Beside the postings it keeps each English term's Snowball stem (``stems.py``). How a
query is ranked over them is ``ranking.py``.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import sqlite3
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NamedTuple

from ..sqlitefiles import delete_in
from . import ranking, stems
from .fields import field_texts, matches_filters
from .ranking import required_matches
from .rows import BATCH, DOC_COLUMNS, FIELDS, POSTING_COLUMNS, document_rows, load_rows
from .tokenize import Tokenizer

__all__ = ["FIELDS", "Hit", "SearchIndex", "field_texts", "layout_problem", "required_matches"]

# bump when tokenization or the stored layout changes: forces a rebuild (4: the Chinese
# words straddling jieba's cut, ``周四`` in ``每周四``)
VERSION = "4"

_TABLES = ("meta", "docs", "postings", "totals", "stems")
_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS docs ({DOC_COLUMNS});
CREATE TABLE IF NOT EXISTS postings ({POSTING_COLUMNS}, PRIMARY KEY (term, doc)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS postings_doc ON postings (doc);
CREATE TABLE IF NOT EXISTS totals (field INTEGER PRIMARY KEY, length INTEGER NOT NULL);
{stems.SCHEMA};
"""


def layout_problem(path: Path) -> str | None:
    """How the index file at ``path`` differs from this version's layout ("layout 2",
    "no stems table"); None when it does not, or when it cannot be read here (locked,
    damaged: that is for other checks)."""
    try:
        with contextlib.closing(sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)) as conn:
            return _outdated(conn)
    except sqlite3.Error:
        return None


def _outdated(conn: sqlite3.Connection) -> str | None:
    """How the open index differs from this version's layout: a table missing (dropped by
    hand, or by a tool) or another layout version; None when it is this one's."""
    found = {name for (name,) in conn.execute("SELECT name FROM sqlite_master")}
    missing = [table for table in _TABLES if table not in found]
    if missing:
        return f"no {missing[0]} table"
    row = conn.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()
    version = None if row is None else str(row[0])
    return None if version == VERSION else f"layout {version or 'unknown'}"


class Hit(NamedTuple):
    """One ranked resource: id, BM25F score, matched query-term positions, the resource."""

    rid: str
    score: float
    matched: tuple[int, ...]
    resource: dict[str, Any]


class SearchIndex:
    """An open index database (a file under ``.git/xbrain`` or ``:memory:``)."""

    def __init__(
        self,
        location: Path | str,
        tokenizer: Tokenizer,
        *,
        prepare: bool = True,
        fields: Callable[[dict[str, Any]], tuple[str, ...]] = field_texts,
        kept: sqlite3.Connection | None = None,
    ) -> None:
        self.tokenizer = tokenizer
        self.fields = fields  # a document's text per field, in FIELDS order
        self.kept = kept is not None  # a server's connection (``kept.py``): left open
        self.conn = kept or sqlite3.connect(str(location), timeout=30, isolation_level=None)
        _ensure_exp(self.conn)
        if prepare:  # readers on the fast path change nothing
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=NORMAL")  # derived data: rebuilt if lost
            if _outdated(self.conn) is not None:  # built again, not trusted
                self.reset()

    def close(self) -> None:
        """Close the database (a kept connection: end its read transaction only)."""
        if self.kept:
            from .kept import release

            release(self.conn)
            return
        self.conn.close()

    def __enter__(self) -> SearchIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- state -----------------------------------------------------------------------------

    def meta(self, key: str) -> str | None:
        """A metadata value (``commit``, ``version``), None when absent."""
        try:
            row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        except sqlite3.OperationalError:
            return None
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        """Set a metadata value (inside the caller's transaction)."""
        self.conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def reset(self) -> None:
        """Drop everything and start an empty index."""
        with self.write():
            for table in _TABLES:
                self.conn.execute(f"DROP TABLE IF EXISTS {table}")
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    self.conn.execute(statement)
            self.conn.executemany(
                "INSERT INTO totals VALUES (?, 0)", [(i,) for i in range(len(FIELDS))]
            )
            self.set_meta("version", VERSION)
            # which build this is: a file made anew may reuse an inode number
            self.set_meta("built", os.urandom(8).hex())

    def write(self) -> _Write:
        """A write transaction (``BEGIN IMMEDIATE``: one writer at a time)."""
        return _Write(self.conn)

    def count(self) -> int:
        """Number of indexed resources."""
        return int(self.conn.execute("SELECT COUNT(*) FROM docs").fetchone()[0])

    # -- upkeep ----------------------------------------------------------------------------

    def remove(self, rid: str) -> None:
        """Forget one resource (inside a write transaction)."""
        row = self.conn.execute(
            f"SELECT doc, {', '.join(f'l{i}' for i in range(len(FIELDS)))} FROM docs WHERE rid = ?",
            (rid,),
        ).fetchone()
        if row is None:
            return
        self.conn.execute("DELETE FROM postings WHERE doc = ?", (row[0],))
        self.conn.execute("DELETE FROM docs WHERE doc = ?", (row[0],))
        self.conn.executemany(
            "UPDATE totals SET length = length - ? WHERE field = ?",
            [(length, i) for i, length in enumerate(row[1:])],
        )

    def holds(self, resource: dict[str, Any]) -> bool:
        """Whether ``resource`` is indexed exactly as it is (re-adding it changes nothing)."""
        row = self.conn.execute(
            "SELECT resource FROM docs WHERE rid = ?", (resource["id"],)
        ).fetchone()
        return row is not None and json.loads(row[0]) == resource

    def add(self, resource: dict[str, Any]) -> None:
        """Index (or re-index) one resource (inside a write transaction)."""
        self.remove(resource["id"])
        # the number SQLite would give the row (the largest plus one), known before the
        # insert so the rows are built as a bulk build builds them
        doc = self.conn.execute("SELECT COALESCE(MAX(doc), 0) + 1 FROM docs").fetchone()[0]
        docs: list[tuple[Any, ...]] = []
        postings: list[list[Any]] = []
        lengths = document_rows(self.tokenizer, self.fields, resource, doc, False, docs, postings)
        stems.record(self.conn, [row[0] for row in postings])
        load_rows(self.conn, docs, postings, staged="postings")
        self.conn.executemany(
            "UPDATE totals SET length = length + ? WHERE field = ?",
            [(length, i) for i, length in enumerate(lengths)],
        )

    def update(self, changed: dict[str, dict[str, Any] | None]) -> None:
        """Apply many resources' changes at once (inside a write transaction): each id
        forgotten, then each resource given re-indexed (None: removed). The rows are the
        ones :meth:`add` writes one at a time (document numbers aside, which say nothing:
        ``add`` too reuses the largest); each statement runs once per table."""
        if not changed:
            return
        totals = [0] * len(FIELDS)
        lengths = ", ".join(f"l{i}" for i in range(len(FIELDS)))
        gone: list[int] = []
        rids = list(changed)
        for first in range(0, len(rids), 500):  # SQLite's bound on a statement's values
            chunk = rids[first : first + 500]
            rows = self.conn.execute(
                f"SELECT doc, {lengths} FROM docs WHERE rid IN ({', '.join('?' * len(chunk))})",
                chunk,
            )
            for doc, *old in rows:
                gone.append(doc)
                totals = [a - b for a, b in zip(totals, old, strict=True)]
        delete_in(self.conn, "DELETE FROM postings WHERE doc", gone)
        delete_in(self.conn, "DELETE FROM docs WHERE doc", gone)
        doc = self.conn.execute("SELECT COALESCE(MAX(doc), 0) FROM docs").fetchone()[0]
        docs: list[tuple[Any, ...]] = []
        postings: list[list[Any]] = []
        given = [resource for resource in changed.values() if resource is not None]
        self.tokenizer.bulk_ahead(text for resource in given for text in self.fields(resource))
        for resource in changed.values():
            if resource is None:
                continue
            doc += 1
            # (a batch's Chinese text cut by jieba-rs once it is worth loading: the same cuts)
            added = document_rows(self.tokenizer, self.fields, resource, doc, True, docs, postings)
            totals = [a + b for a, b in zip(totals, added, strict=True)]
        stems.record(self.conn, {row[0] for row in postings})
        postings.sort()  # the table's order: each row lands beside the one before
        load_rows(self.conn, docs, postings, staged="postings")
        self.conn.executemany(
            "UPDATE totals SET length = length + ? WHERE field = ?",
            [(length, i) for i, length in enumerate(totals) if length],
        )

    def rebuild(
        self, resources: Iterable[dict[str, Any]], commit: str, *, bulk: bool = False
    ) -> int:
        """Replace the whole index with ``resources`` as of ``commit``.

        A bulk load, not ``add`` per resource: rows go in batches into an unindexed
        staging table, SQLite sorts them into the postings table once, the per-document
        index is created after the load, and the field totals are summed in Python.
        ``bulk`` (a whole store) lets the tokenizer use its faster bulk segmenter.
        """
        count = 0
        totals = [0] * len(FIELDS)
        seen: dict[str, tuple[int, list[int]]] = {}  # rid → (doc, lengths)
        docs: list[tuple[Any, ...]] = []
        postings: list[list[Any]] = []
        with self.write():  # one transaction: readers see the old index or the new one
            self.begin_load()
            for doc, resource in enumerate(resources, 1):
                earlier = seen.get(resource["id"])
                if earlier is not None:  # the same id twice (a provider's list): the last wins
                    load_rows(self.conn, docs, postings)
                    self.conn.execute("DELETE FROM temp.staged WHERE doc = ?", (earlier[0],))
                    self.conn.execute("DELETE FROM docs WHERE doc = ?", (earlier[0],))
                    totals = [a - b for a, b in zip(totals, earlier[1], strict=True)]
                    count -= 1
                lengths = document_rows(
                    self.tokenizer, self.fields, resource, doc, bulk, docs, postings
                )
                seen[resource["id"]] = (doc, lengths)
                count += 1
                totals = [a + b for a, b in zip(totals, lengths, strict=True)]
                if len(postings) >= BATCH:
                    load_rows(self.conn, docs, postings)
            load_rows(self.conn, docs, postings)
            self.end_load(totals, commit)
        return count

    def begin_load(self) -> None:
        """Start a bulk load (inside a write transaction): an empty index, its per-document
        index dropped, a staging table for postings in any order."""
        self.reset()
        self.conn.execute("DROP INDEX IF EXISTS postings_doc")
        self.conn.execute("DROP TABLE IF EXISTS temp.staged")
        self.conn.execute("CREATE TEMP TABLE staged AS SELECT * FROM postings WHERE 0")

    def end_load(self, totals: list[int], commit: str, *, also: str | None = None) -> None:
        """Finish a bulk load: the staged postings (and ``also``'s, an attached database
        another process loaded) sorted into place, the indexes, totals and commit."""
        staged = (
            "temp.staged"
            if also is None
            else f"(SELECT * FROM temp.staged UNION ALL SELECT * FROM {also}.staged)"
        )
        if also is not None:
            self.conn.execute(f"INSERT INTO docs SELECT * FROM {also}.docs")
        self.conn.execute("PRAGMA threads = 2")  # SQLite sorts on a second core: ≈ 50 ms of 10k
        self.conn.execute(f"INSERT INTO postings SELECT * FROM {staged} ORDER BY term, doc")
        self.conn.execute("PRAGMA threads = 0")
        self.conn.execute("DROP TABLE temp.staged")
        self.conn.execute("CREATE INDEX postings_doc ON postings (doc)")
        stems.record_indexed(self.conn)
        self.conn.executemany(
            "UPDATE totals SET length = ? WHERE field = ?",
            [(length, i) for i, length in enumerate(totals)],
        )
        self.set_meta("commit", commit)

    # -- querying --------------------------------------------------------------------------

    def _candidates(self, domain: str | None, feature: str | None, style: str | None) -> list[int]:
        rows = self.conn.execute("SELECT doc, design FROM docs WHERE design IS NOT NULL")
        return [
            doc
            for doc, facets in rows
            if matches_filters(json.loads(facets), domain, feature, style)
        ]

    def search(
        self,
        terms: list[str],
        limit: int,
        domain: str | None = None,
        feature: str | None = None,
        style: str | None = None,
        extra: list[dict[str, Any]] | None = None,
    ) -> list[Hit]:
        """Top ``limit`` hits: positive score, >= 35% of terms matched, ties by id.

        ``extra`` resources (a provider's candidates) are ranked as if indexed too, inside
        a savepoint that is rolled back, so they share the collection's statistics.
        """
        if extra:
            self.conn.execute("SAVEPOINT merged")
            try:
                for resource in extra:
                    self.add(resource)
                return self.search(terms, limit, domain, feature, style)
            finally:
                self.conn.execute("ROLLBACK TO merged")
                self.conn.execute("RELEASE merged")
        filtered = bool(domain or feature or style)
        candidates = self._candidates(domain, feature, style) if filtered else None
        if not terms:
            if candidates is None:
                return []
            rows = self.conn.execute(
                f"SELECT rid, resource FROM docs WHERE doc IN ({', '.join('?' * len(candidates))}) "
                "ORDER BY rid LIMIT ?",
                (*candidates, limit),
            )
            return [Hit(rid, 1.0, (), json.loads(data)) for rid, data in rows]
        total_docs = ranking.documents(self.conn)
        if total_docs == 0 or candidates == []:
            return []
        hits = []
        for rid, score, positions, data in ranking.scored(
            self.conn, terms, limit, candidates, total_docs
        ):
            matched = tuple(sorted(int(p) for p in str(positions).split(",")))
            hits.append(Hit(rid, float(score), matched, json.loads(data)))
        return hits


def _ensure_exp(conn: sqlite3.Connection) -> None:
    """SQLite's ``exp`` where the library was built without its math functions."""
    try:
        conn.execute("SELECT exp(0)")
    except sqlite3.OperationalError:
        conn.create_function("exp", 1, math.exp, deterministic=True)


class _Write:
    """``with index.write():`` — BEGIN IMMEDIATE … COMMIT (ROLLBACK on error)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.outer = False

    def __enter__(self) -> None:
        self.outer = not self.conn.in_transaction
        if self.outer:
            self.conn.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind: object, value: object, trace: object) -> None:
        if not self.outer:
            return
        if kind is None:
            self.conn.execute("COMMIT")
        else:
            self.conn.execute("ROLLBACK")
