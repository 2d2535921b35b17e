"""English stems: a weaker second match, so ``sorted`` finds a note that says ``sorting``.

The index keeps its exact terms. Beside them, a small ``stems`` table maps the Snowball
English stem of every indexed ``[a-z]+`` term whose stem differs from it (``sorting`` →
``sort``); a query term's *variants* are then the indexed terms that share its stem — the
term itself, the stem when that is a term too, and the table's rows. Ranking reads the
variants' postings as one term (``ranking.py``). Chinese, numbers, ``foo.bar`` and other
terms stem to themselves and have no variants but themselves.

Rows are only ever added (a term whose last document was removed keeps its row; its
variants then find no postings); a rebuild starts the table afresh.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable
from functools import cache
from typing import Any

from ..sqlitefiles import insert_rows

__all__ = ["MARK", "SCHEMA", "marked", "record", "record_indexed", "stem", "stems_of", "variants"]

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS stems (stem TEXT NOT NULL, term TEXT NOT NULL, "
    "PRIMARY KEY (stem, term)) WITHOUT ROWID"
)
_WORD = re.compile(r"[a-z]+\Z")
# Recall's entry cache holds each English term's stem beside the term, marked so it is
# never a word of its own (the tokenizer drops control characters).
MARK = "\x01"


@cache
def _english() -> Any:
    import Stemmer  # PyStemmer: the Snowball project's own C stemmers

    return Stemmer.Stemmer("english")


def stem(term: str) -> str:
    """The Snowball English stem of a lowercase ``[a-z]+`` term; any other term itself."""
    return str(_english().stemWord(term)) if _WORD.match(term) else term


def stems_of(terms: Iterable[str]) -> dict[str, str]:
    """The Snowball stem of each English ``[a-z]+`` term among ``terms`` (others left out)."""
    words = sorted({term for term in terms if _WORD.match(term)})
    return dict(zip(words, _english().stemWords(words), strict=True)) if words else {}


def marked(terms: Iterable[str]) -> set[str]:
    """The marked stems of ``terms``' English words: what an entry cache holds beside them,
    and what a prompt looks them up by."""
    return {MARK + root for root in stems_of(terms).values()}


def _inflected(terms: Iterable[str]) -> list[tuple[str, str]]:
    """(stem, term) for each English term whose stem is not the term itself."""
    words = [term for term in terms if _WORD.match(term)]
    stems = _english().stemWords(words) if words else []
    return [(s, term) for s, term in zip(stems, words, strict=True) if s != term]


def record(conn: sqlite3.Connection, terms: Iterable[str]) -> None:
    """Add the stems of ``terms`` (a document's, as it is indexed) to the table."""
    insert_rows(conn, "INSERT OR IGNORE INTO stems", _inflected(terms))


def record_indexed(conn: sqlite3.Connection) -> None:
    """Fill the table from every term in the postings (the end of a bulk build)."""
    terms = [term for (term,) in conn.execute("SELECT DISTINCT term FROM postings")]
    record(conn, terms)


def variants(conn: sqlite3.Connection, term: str) -> list[str]:
    """The indexed forms a query term matches by stem, the term itself first."""
    if not _WORD.match(term):
        return [term]
    root = stem(term)
    rows = conn.execute("SELECT term FROM stems WHERE stem = ?", (root,))
    found = {other for (other,) in rows}
    if root != term and stem(root) == root and _indexed(conn, root):
        found.add(root)  # the stem is a word of its own (``sort``), which no row lists
    found.discard(term)
    return [term, *sorted(found)]


def _indexed(conn: sqlite3.Connection, term: str) -> bool:
    """Whether any document holds ``term``."""
    row = conn.execute("SELECT 1 FROM postings WHERE term = ? LIMIT 1", (term,)).fetchone()
    return row is not None
