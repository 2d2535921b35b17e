"""The rows a bulk index build writes for a document: one ``docs`` row, one postings row
per distinct term (its count in each field), staged in batches."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from typing import Any

from ..sqlitefiles import insert_rows
from .fields import design_facets
from .tokenize import Tokenizer

__all__ = ["BATCH", "DOC_COLUMNS", "FIELDS", "POSTING_COLUMNS", "document_rows", "load_rows"]

FIELDS = ("design", "title", "purpose", "useWhen", "summary", "text")  # searched, weighed
BATCH = 200_000  # postings held in memory during a rebuild before they are written

# the columns of the index's tables (and of a helper's scratch copies of them)
# the field lengths before the JSON: ranking reads them for every matched posting, and
# SQLite reaches a column after a long value only by walking its overflow pages
DOC_COLUMNS = (
    "doc INTEGER PRIMARY KEY, rid TEXT UNIQUE NOT NULL, "
    + ", ".join(f"l{i} INTEGER NOT NULL" for i in range(len(FIELDS)))
    + ", design TEXT, resource TEXT NOT NULL"
)
POSTING_COLUMNS = "term TEXT NOT NULL, doc INTEGER NOT NULL, " + ", ".join(
    f"f{i} INTEGER NOT NULL" for i in range(len(FIELDS))
)
_COLUMNS = ", ".join(f"l{i}" for i in range(len(FIELDS)))


def document_rows(
    tokenizer: Tokenizer,
    fields: Callable[[dict[str, Any]], tuple[str, ...]],
    resource: dict[str, Any],
    doc: int,
    bulk: bool,
    docs: list[tuple[Any, ...]],
    postings: list[list[Any]],
) -> list[int]:
    """Append one resource's ``docs`` row and postings rows (as document ``doc``); its
    field lengths."""
    counts = [tokenizer.counts(text, bulk) for text in fields(resource)]
    lengths = [sum(c.values()) for c in counts]
    docs.append(
        (
            doc,
            resource["id"],
            design_facets(resource),
            json.dumps(resource, ensure_ascii=False, separators=(",", ":")),
            *lengths,
        )
    )
    rows: dict[str, list[Any]] = {}  # term → [term, doc, f0 … f5]
    zeros = [0] * len(FIELDS)
    for i, field in enumerate(counts, 2):
        for term, n in field.items():
            row = rows.get(term)
            if row is None:
                row = rows[term] = [term, doc, *zeros]
            row[i] = n
    postings.extend(rows.values())
    return lengths


def load_rows(
    conn: sqlite3.Connection,
    docs: list[tuple[Any, ...]],
    postings: list[list[Any]],
    staged: str = "temp.staged",
) -> None:
    """Insert and clear one batch of a bulk load: into ``docs`` and the staging table."""
    insert_rows(conn, f"INSERT INTO docs (doc, rid, design, resource, {_COLUMNS})", docs)
    insert_rows(conn, f"INSERT INTO {staged}", postings)
    docs.clear()
    postings.clear()
