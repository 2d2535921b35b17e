"""Level 0 of skill recall: skills ranked by the same lexical index as resources.

Each active skill is one document of a second index database
(``.git/xbrain/skills.sqlite``): its name (title weight), description (purpose weight)
and the body of the revision recall shows (the published one, else the head; text
weight), tokenized like everything else (Chinese segmented). The index records the
commit it reflects and each skill's tree id, so catching up re-reads only the skills
whose files changed. A commit that touched no skill just moves the recorded commit, so
recall after a resource ``put`` stays on the fast path: a fresh process answers from
SQLite without opening git or parsing YAML.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from .index import VERSION, SearchIndex, remove_index
from .query import MAX_QUERY, main_head
from .tokenize import Tokenizer

__all__ = ["SKILL_INDEX", "after_commit", "recall", "reindex_skills"]

SKILL_INDEX = Path("xbrain") / "skills.sqlite"
MAX_LIMIT = 50


def skill_fields(doc: dict[str, Any]) -> tuple[str, ...]:
    """A skill's text per index field: name where a title goes, description where a
    purpose goes, the body where a resource's text goes."""
    return ("", doc["name"], doc["description"], "", "", doc["body"])


def _answer(index: SearchIndex, terms: list[str], limit: int) -> dict[str, Any]:
    results = []
    for hit in index.search(terms, limit):
        doc = hit.resource
        results.append(
            {
                "slug": doc["slug"],
                "name": doc["name"],
                "description": doc["description"],
                "published": doc["published"],
                "revision_id": doc["revision_id"],
                "score": round(hit.score, 6),
                "matched": [terms[i] for i in hit.matched],
            }
        )
    return {"query": terms, "count": len(results), "results": results}


def recall(store_dir: Path, cache_dir: Path, query: str, limit: int = 5) -> dict[str, Any]:
    """Ranked skill descriptors ``{slug, name, description, published, score}``."""
    from ..errors import InvalidInputError

    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise InvalidInputError(f"The limit must be 1-{MAX_LIMIT}.")
    if not isinstance(query, str) or not query.strip() or len(query.strip()) > MAX_QUERY:
        raise InvalidInputError(f"Give a query of 1-{MAX_QUERY:,} characters.")
    trimmed = query.strip()
    tokenizer = Tokenizer(cache_dir)
    try:
        terms = tokenizer.query_terms(trimmed)
        if not terms:
            return {"query": terms, "count": 0, "results": []}
        control = store_dir / ".git"
        fast = _fast(control, tokenizer, terms, limit)
        if fast is not None:
            return fast
        from ..core import Core, private_umask

        core = Core(store_dir, cache_dir=cache_dir)
        with core.reading() as view, private_umask():
            if view is None:
                return {"query": terms, "count": 0, "results": []}
            with _open(control, tokenizer) as index:
                _catch_up(index, view)
                return _answer(index, terms, limit)
    finally:
        tokenizer.close()


def _fast(
    control: Path, tokenizer: Tokenizer, terms: list[str], limit: int
) -> dict[str, Any] | None:
    path = control / SKILL_INDEX
    head = main_head(control)
    if head is None or not path.is_file():
        return None
    try:
        with SearchIndex(path, tokenizer, prepare=False, fields=skill_fields) as index:
            index.conn.execute("BEGIN")
            if index.meta("version") != VERSION or index.meta("commit") != head:
                return None
            return _answer(index, terms, limit)
    except sqlite3.Error:
        return None


def _open(control: Path, tokenizer: Tokenizer) -> SearchIndex:
    path = control / SKILL_INDEX
    path.parent.mkdir(mode=0o700, exist_ok=True)
    try:
        return SearchIndex(path, tokenizer, fields=skill_fields)
    except sqlite3.DatabaseError:
        remove_index(path)  # derived data: start over
        return SearchIndex(path, tokenizer, fields=skill_fields)


def _document(view: Any, slug: str) -> dict[str, Any] | None:
    """The indexed form of an active skill (None: archived or gone)."""
    from ..kinds import skill as kind
    from ..kinds.skillformat import parse_skill_md

    state = kind.read_state(view, slug)
    if state is None or state["status"] != "active":
        return None
    entry, fallback = kind.chosen(state)
    parsed = parse_skill_md(kind.instructions(view, slug, entry["id"]))
    return {
        "id": state["id"],
        "slug": slug,
        "name": parsed.frontmatter["name"],
        "description": parsed.frontmatter["description"],
        "published": not fallback,
        "revision_id": entry["id"],
        "body": parsed.body,
    }


def _catch_up(index: SearchIndex, view: Any) -> None:
    """Re-index the skills whose tree changed since the indexed commit."""
    from ..kinds import skill as kind
    from ..kinds.skillformat import skill_id

    head = view.snap.commit
    with index.write():
        if index.meta("commit") == head:
            return
        known: dict[str, str] = json.loads(index.meta("trees") or "{}")
        now = view.children(kind.DIRECTORY)
        for slug in sorted(known.keys() - now.keys()):
            index.remove(skill_id(slug))
        for slug in sorted(now):
            if known.get(slug) == now[slug]:
                continue
            doc = _document(view, slug)
            if doc is None:
                index.remove(skill_id(slug))
            else:
                index.add(doc)
        index.set_meta("trees", json.dumps(now, sort_keys=True))
        index.set_meta("commit", str(head))


def after_commit(
    control: Path, cache_dir: Path, view: Any, parent: str | None, touched: bool
) -> None:
    """Keep a skill index that reflected ``parent`` current with ``view``'s commit
    (``touched``: the commit changed a skill; otherwise only the recorded commit moves).
    A missing index, or one at another commit, is left for the next recall."""
    path = control / SKILL_INDEX
    if not path.is_file():
        return
    tokenizer = Tokenizer(cache_dir)
    try:
        with SearchIndex(path, tokenizer, fields=skill_fields) as index:
            if index.meta("commit") != parent:
                return
            if touched:
                _catch_up(index, view)
            else:
                with index.write():
                    index.set_meta("commit", str(view.snap.commit))
    finally:
        tokenizer.close()


def reindex_skills(control: Path, cache_dir: Path, view: Any) -> int:
    """Build the skill index from scratch; the number of skills indexed."""
    remove_index(control / SKILL_INDEX)
    tokenizer = Tokenizer(cache_dir)
    try:
        with _open(control, tokenizer) as index:
            _catch_up(index, view)
            return index.count()
    finally:
        tokenizer.close()
