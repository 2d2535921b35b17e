"""Request rules, the output shape, and the fast path of a fresh ``xbrain search``.

When the store's index already reflects ``refs/heads/main`` — the usual case, since
every write keeps it current — a search needs neither git objects nor YAML: it reads
the ref, checks the index's commit inside one SQLite read transaction, ranks, and takes
the resources from the index. Anything else (no index, another commit, an old layout)
returns None and ``retrieval.run.search_store`` takes the full path through git.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

from ..errors import InvalidInputError, NotFoundError, XbrainError
from ..inputs import read_file, whole_number
from ..sqlitefiles import DAMAGED, DamagedRow
from ..text import canonical_url
from .freshness import reflects
from .index import VERSION, Hit, SearchIndex
from .kept import reader
from .tokenize import Tokenizer

__all__ = [
    "answer",
    "brief",
    "current",
    "damaged",
    "index_meta",
    "indexed_document",
    "indexed_listing",
    "indexed_resource",
    "main_head",
    "open_current",
    "read_current",
    "read_query",
    "validate_request",
]

GUIDANCE = (
    "Check applicability, limitations and freshness. Cite original source URLs only when "
    "used. No relevant match means no recommendation."
)
_T = TypeVar("_T")
MAX_QUERY = 2000
REQUEST_ERROR = "Use a query or design filter (max 2,000 characters), and limit 1–20."
INDEX_FILE = Path("xbrain") / "search.sqlite"
SEMANTIC_FILE = Path("xbrain") / "semantic.json"  # this device's semantic provider


def validate_request(
    query: Any, limit: int, domain: str | None, feature: str | None, style: str | None
) -> str:
    """The original's checks, in its order; returns the trimmed query."""
    for value in (domain, feature, style):
        if value is not None and (not isinstance(value, str) or len(value) > MAX_QUERY):
            raise InvalidInputError("Invalid design filter.")
    if domain and domain not in _domains():
        raise InvalidInputError("Unknown design domain.")
    if not isinstance(query, str):
        raise InvalidInputError(REQUEST_ERROR)
    trimmed = query.strip()
    if (not trimmed and not (domain or feature or style)) or len(trimmed) > MAX_QUERY:
        raise InvalidInputError(REQUEST_ERROR)
    whole_number(limit, 1, 20, REQUEST_ERROR)
    return trimmed


def _domains() -> list[str]:
    from ..schemas import load_schema  # only a --domain filter needs the design schema

    design = load_schema("design")
    labels: list[str] = design["properties"]["domains"]["items"]["properties"]["label"]["enum"]
    return labels


def read_query(stream: BinaryIO) -> str:
    """A query given on stdin (``xbrain search -``): UTF-8, trimmed like any query."""
    data = stream.read(4 * MAX_QUERY + 2)
    if len(data) > 4 * MAX_QUERY + 1:  # more bytes than 2,000 characters and a newline
        raise InvalidInputError(REQUEST_ERROR)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInputError(REQUEST_ERROR) from None


def answer(hits: list[Hit], terms: list[str]) -> dict[str, Any]:
    """The original's output: ``{mode, provider, results, guidance}``.

    Results that cite the same page (one canonical URL saved under several source ids)
    collapse into the best-ranked one, which lists the others under ``sameUrl``.
    """
    results: list[dict[str, Any]] = []
    by_url: dict[str, dict[str, Any]] = {}
    for hit in hits:
        canonical = canonical_url(hit.resource["source"]["url"])
        kept = by_url.get(canonical)
        if kept is not None:
            kept.setdefault("sameUrl", []).append(
                {"id": hit.resource["id"], "score": round(hit.score, 6)}
            )
            continue
        result = {
            "resource": hit.resource,
            "score": round(hit.score, 6),
            "matched": [terms[pos] for pos in hit.matched],
            "citation": {
                "id": hit.resource["id"],
                "url": hit.resource["source"]["url"],
                "updatedAt": hit.resource["updatedAt"],
            },
        }
        by_url[canonical] = result
        results.append(result)
    return {
        "mode": "lexical_candidates",
        "provider": None,
        "results": results,
        "guidance": GUIDANCE,
        "retrieval": "lexical",
    }


SNIPPET = 300


def brief(found: dict[str, Any]) -> dict[str, Any]:
    """A search answer with each resource cut to what an agent decides with.

    ``resource`` becomes ``brief``: id, title, purpose, useWhen, limitations and a
    snippet of at most 300 characters around the first matched term in the text (else
    the start of the summary or text). ``get ID`` returns the whole resource.
    """
    results = []
    for result in found["results"]:
        resource = result["resource"]
        short = {key: resource[key] for key in ("id", "title", "purpose", "useWhen", "limitations")}
        short["snippet"] = _snippet(resource, result["matched"])
        rest = {key: value for key, value in result.items() if key != "resource"}
        results.append({"brief": short, **rest})
    return {**found, "results": results}


def _snippet(resource: dict[str, Any], matched: list[str]) -> str:
    for field in ("text", "summary"):
        text = " ".join(str(resource.get(field) or "").split())
        lowered = text.lower()
        for term in matched:
            at = lowered.find(term.lower())
            if at >= 0:
                start = max(0, at - SNIPPET // 3)
                if start:  # begin at a word boundary when there is one close by
                    space = text.find(" ", start, at)
                    start = space + 1 if space >= 0 else start
                piece = text[start : start + SNIPPET - 2]
                return (
                    ("…" if start else "") + piece + ("…" if start + len(piece) < len(text) else "")
                )
    text = " ".join(str(resource.get("summary") or resource.get("text") or "").split())
    return text if len(text) <= SNIPPET else text[: SNIPPET - 1] + "…"


PACKED_REFS_BOUND = 1 << 20  # a store's packed-refs holds a few lines
_PACKED_MAIN = b" refs/heads/main"


def main_head(control_dir: Path) -> str | None:
    """The commit `main` points at: its ref file, else (after a ``git gc``) its line in
    ``packed-refs``, as git reads it; None when unborn or unreadable (both read through
    the bounded reader every input goes through)."""
    try:
        data = read_file(control_dir / "refs" / "heads" / "main", 4096, "")
    except NotFoundError:
        return _packed_main(control_dir)
    except XbrainError:
        return None
    value = data.decode("ascii", "replace").strip()
    return value if len(value) == 40 else None


def _packed_main(control_dir: Path) -> str | None:
    try:
        data = read_file(control_dir / "packed-refs", PACKED_REFS_BOUND, "")
    except XbrainError:
        return None
    for line in data.splitlines():
        if line.endswith(_PACKED_MAIN) and len(line) == 40 + len(_PACKED_MAIN):
            value = line[:40].decode("ascii", "replace")
            return value if all(c in "0123456789abcdef" for c in value) else None
    return None


def open_current(path: Path, expected: dict[str, str]) -> sqlite3.Connection | None:
    """A read-only connection to a derived database, inside one read snapshot, when its
    ``meta`` table holds ``expected`` (format version, …) and it reflects the commit
    ``expected`` names (:mod:`.freshness`); None when it is missing, stale or damaged.
    The caller closes it."""
    if not path.is_file():
        return None
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=10)
    except sqlite3.Error:
        return None
    try:
        conn.execute("BEGIN")  # one snapshot for the check and the reads that follow
        meta = dict(conn.execute("SELECT key, value FROM meta"))
        head = expected.get("commit")
        same = all(meta.get(key) == value for key, value in expected.items() if key != "commit")
        if same and (head is None or reflects(path, meta.get("commit"), head)):
            return conn
    except sqlite3.Error:
        pass
    conn.close()
    return None


def damaged(path: Path, probe: str) -> bool:
    """Whether SQLite finds the database at ``path`` damaged (``quick_check``, then the
    query ``probe``). A database that cannot even be opened here — locked, a full disk, a
    read-only store — is not called damaged: it is not, and is not ours to delete."""
    import contextlib

    try:
        with contextlib.closing(sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)) as conn:
            ok = conn.execute("PRAGMA quick_check").fetchone()[0] == "ok"
            conn.execute(probe).fetchone()
    except sqlite3.OperationalError:
        return False
    except sqlite3.Error:
        return True
    return not ok


def index_meta(head: str) -> dict[str, str]:
    """What the search index's ``meta`` holds when it reflects commit ``head``."""
    return {"version": VERSION, "commit": head}


def read_current(
    control_dir: Path,
    file: Path,
    meta: Callable[[str], dict[str, str]],
    read: Callable[[sqlite3.Connection], _T],
) -> _T | None:
    """``read(conn)`` on the derived database ``file`` under ``control_dir`` when its
    ``meta`` is ``meta(main)`` right now (inside one read snapshot), else None: no
    ``main``, no database, another commit, or damaged (SQLite fails)."""
    head = main_head(control_dir)
    if head is None:
        return None
    conn = open_current(control_dir / file, meta(head))
    if conn is None:
        return None
    try:
        return read(conn)
    except DAMAGED:  # damaged, or an SQLite without JSON functions
        return None
    finally:
        conn.close()


def indexed_document(
    control_dir: Path, file: Path, meta: Callable[[str], dict[str, str]], rid: str
) -> dict[str, Any] | None:
    """Document ``rid`` of a search index (resources, or skills) that reflects ``main``
    right now; None when the index cannot say or holds no such document."""

    def read(conn: sqlite3.Connection) -> dict[str, Any] | None:
        row = conn.execute("SELECT resource FROM docs WHERE rid = ?", (rid,)).fetchone()
        return None if row is None else _document(row[0])

    return read_current(control_dir, file, meta, read)


def indexed_resource(control_dir: Path, rid: str) -> dict[str, Any] | None:
    """Resource ``rid`` as an index that reflects ``main`` right now holds it; None when
    the index cannot say (missing, stale, damaged) or holds no such resource (deleted,
    never saved, not an id): the full path through git answers, and words, those."""
    found = indexed_document(control_dir, INDEX_FILE, index_meta, rid)
    return found if found is not None and found.get("id") == rid else None  # else damaged


_LIVE = """FROM docs WHERE (?1 IS NULL OR json_extract(resource, '$.updatedAt') >= ?1)
AND (?2 IS NULL OR json_extract(resource, '$.source.provider') = ?2)"""


def indexed_listing(
    control_dir: Path,
    floor: str | None,
    provider: str | None,
    offset: int,
    limit: int,
    shape: Callable[[dict[str, Any]], dict[str, Any]],
) -> tuple[int, list[dict[str, Any]]] | None:
    """``xbrain list`` from an index that reflects ``main`` right now: how many live
    resources were updated at or after ``floor`` (and come from ``provider``), and the
    page of them as ``shape`` makes each, newest first, ties by id (the catalog's order);
    None when the index cannot say (a row ``shape`` cannot read is damage too)."""

    def read(conn: sqlite3.Connection) -> tuple[int, list[dict[str, Any]]]:
        total = conn.execute(f"SELECT COUNT(*) {_LIVE}", (floor, provider)).fetchone()[0]
        ids = conn.execute(  # the order sorts ids, not whole resources
            f"SELECT rid {_LIVE} ORDER BY json_extract(resource, '$.updatedAt') DESC, "
            "rid DESC LIMIT ?3 OFFSET ?4",
            (floor, provider, limit, offset),
        ).fetchall()
        one = "SELECT resource FROM docs WHERE rid = ?"
        return total, [shape(_document(conn.execute(one, rid).fetchone()[0])) for rid in ids]

    return read_current(control_dir, INDEX_FILE, index_meta, read)


def _document(text: str) -> dict[str, Any]:
    import json

    found = json.loads(text)
    if not isinstance(found, dict):
        raise DamagedRow("not a resource")  # the caller passes it over
    return found


def current(
    control_dir: Path,
    tokenizer: Tokenizer,
    terms: list[str],
    limit: int,
    domain: str | None,
    feature: str | None,
    style: str | None,
) -> dict[str, Any] | None:
    """The answer from an index that reflects ``main`` right now, else None."""
    path = control_dir / INDEX_FILE
    head = main_head(control_dir)
    if head is None or not path.is_file():
        return None
    try:
        with SearchIndex(path, tokenizer, prepare=False, kept=reader(path)) as index:
            index.conn.execute("BEGIN")  # one snapshot for the check and the ranking
            if index.meta("version") != VERSION or not reflects(path, index.meta("commit"), head):
                return None
            return answer(index.search(terms, limit, domain, feature, style), terms)
    except DAMAGED:  # the full path rebuilds a damaged index
        return None
