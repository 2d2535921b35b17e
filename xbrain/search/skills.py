"""Level 0 of skill recall: skills ranked by the same lexical index as resources.

Each active skill is one document of a second index database
(``.git/xbrain/skills.sqlite``): its name (title weight), description (purpose weight)
and the body of the revision recall shows (the published one, else the head; text
weight), tokenized like everything else (Chinese segmented). The index records the
commit it reflects and each skill's tree id, so catching up re-reads only the skills
whose files changed. A commit that touched no skill leaves the index alone and notes
that it still holds (:mod:`.freshness`), so recall after a resource ``put`` stays on the
fast path: a fresh process answers from SQLite without opening git or parsing YAML.
"""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..sqlitefiles import DAMAGED, rebuilt_if_damaged, remove_database, unsynced_commits
from .freshness import reflects
from .index import VERSION, SearchIndex
from .kept import reader
from .query import MAX_QUERY, indexed_document, main_head
from .skilldoc import document, documents, skill_fields
from .tokenize import Tokenizer

if TYPE_CHECKING:
    from ..core import GitStore

__all__ = [
    "SKILL_INDEX",
    "after_commit",
    "checked_query",
    "component",
    "level1",
    "ranked",
    "recall",
    "reindex_skills",
    "skill_index_meta",
]

SKILL_INDEX = Path("xbrain") / "skills.sqlite"
SKILL_FORMAT = "4"  # bump when the indexed document changes: forces a rebuild
SLUG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*", re.ASCII)
MAX_LIMIT = 50


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
    return {"terms": terms, "count": len(results), "results": results}


def recall(
    store_dir: Path,
    cache_dir: Path,
    query: str,
    limit: int = 5,
    tokenizer: Tokenizer | None = None,
) -> dict[str, Any]:
    """Level 0 ranked lexically: skill descriptors ``{slug, name, description,
    published, score}`` under the query as asked and the terms it was searched by
    (``tokenizer``: a caller's, whose loaded segmenter is reused and left open). The
    hybrid answer (semantic recall on) is :func:`xbrain.retrieval.skillrecall.recall`."""
    trimmed = checked_query(query, limit)
    return {"query": trimmed} | ranked(store_dir, cache_dir, trimmed, limit, tokenizer)


def checked_query(query: str, limit: int) -> str:
    """``query`` trimmed, once it and ``limit`` are in bounds (else InvalidInputError)."""
    from ..errors import InvalidInputError
    from ..inputs import whole_number

    whole_number(limit, 1, MAX_LIMIT, f"The limit must be 1-{MAX_LIMIT}.")
    if not isinstance(query, str) or not query.strip() or len(query.strip()) > MAX_QUERY:
        raise InvalidInputError(f"Give a query of 1-{MAX_QUERY:,} characters.")
    return query.strip()


def ranked(
    store_dir: Path, cache_dir: Path, trimmed: str, limit: int, tokenizer: Tokenizer | None
) -> dict[str, Any]:
    """``{terms, count, results}`` for a checked, trimmed query."""
    own = tokenizer is None
    if tokenizer is None:
        tokenizer = Tokenizer(cache_dir)
    try:
        terms = tokenizer.query_terms(trimmed)
        if not terms:
            return {"terms": terms, "count": 0, "results": []}
        control = store_dir / ".git"
        fast = _fast(control, tokenizer, terms, limit)
        if fast is not None:
            return fast
        from ..core import Core, private_umask

        core = Core(store_dir, cache_dir=cache_dir)
        with core.reading() as view, private_umask():
            if view is None:
                return {"terms": terms, "count": 0, "results": []}

            def attempt() -> dict[str, Any]:
                with _caught_up(control, tokenizer, view) as index:
                    return _answer(index, terms, limit)

            return rebuilt_if_damaged(control / SKILL_INDEX, attempt)
    finally:
        if own:
            tokenizer.close()


def skill_index_meta(head: str) -> dict[str, str]:
    """What the skill index's ``meta`` holds when it reflects commit ``head``."""
    return {"version": VERSION, "skill-format": SKILL_FORMAT, "commit": head}


def _fast(
    control: Path, tokenizer: Tokenizer, terms: list[str], limit: int
) -> dict[str, Any] | None:
    path = control / SKILL_INDEX
    head = main_head(control)
    if head is None or not path.is_file():
        return None
    try:
        kept = reader(path)  # a server's (``kept.py``)
        with SearchIndex(path, tokenizer, prepare=False, fields=skill_fields, kept=kept) as index:
            index.conn.execute("BEGIN")
            expected = skill_index_meta(head)
            if any(index.meta(key) != expected[key] for key in ("version", "skill-format")):
                return None
            if not reflects(path, index.meta("commit"), head):
                return None
            return _answer(index, terms, limit)
    except DAMAGED:  # the full path rebuilds a damaged index
        return None


def _indexed(control: Path, slug: str) -> dict[str, Any] | None:
    """A skill's indexed document when the index reflects ``main`` now, else None."""
    if not SLUG.fullmatch(slug):
        return None
    return indexed_document(control, SKILL_INDEX, skill_index_meta, slug)


def level1(store_dir: Path, slug: str) -> dict[str, Any] | None:
    """Level 1 of an active skill from a current index (no git, no YAML), else None."""
    doc = _indexed(store_dir / ".git", slug)
    return None if doc is None else dict(doc["level1"])


def component(store_dir: Path, slug: str, revision: str, path: str) -> dict[str, Any] | None:
    """Level 2 from the working tree when ``revision`` is the one the index shows and the
    file's bytes match its manifest hash (so they are exactly the committed bytes);
    None sends the caller to git."""
    doc = _indexed(store_dir / ".git", slug)
    if doc is None or revision != doc["revision_id"]:
        return None
    item = next((f for f in doc["level1"]["files"] if f["path"] == path), None)
    if item is None:
        return None
    from ..kinds.skill import file_path

    data = _read_regular(store_dir / file_path(slug, revision, path), item["bytes"])
    if data is None:
        return None
    import hashlib

    if hashlib.sha256(data).hexdigest() != item["sha256"]:
        return None
    from ..kinds.skillshow import component as shown

    return shown(slug, revision, item, data)


def _read_regular(path: Path, size: int) -> bytes | None:
    """At most ``size + 1`` bytes of a regular file, never through a final symlink and
    never blocking on a FIFO; None when it is anything else or unreadable."""
    import os
    import stat

    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(size + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    return data if len(data) == size else None


def _open(control: Path, tokenizer: Tokenizer) -> SearchIndex:
    path = control / SKILL_INDEX
    path.parent.mkdir(mode=0o700, exist_ok=True)
    try:
        return SearchIndex(path, tokenizer, fields=skill_fields)
    except sqlite3.OperationalError:
        raise  # locked, read-only, a full disk: not damage, and not ours to delete
    except sqlite3.DatabaseError:
        remove_database(path)  # damaged, and derived data: start over
        return SearchIndex(path, tokenizer, fields=skill_fields)


def _caught_up(control: Path, tokenizer: Tokenizer, view: Any) -> SearchIndex:
    """The skill index brought to ``view``'s commit; where it cannot be written (a
    read-only store, a full disk), one built in memory for this call, as search does."""
    index = None
    try:
        index = _open(control, tokenizer)
        _catch_up(index, view)
        return index
    except (sqlite3.OperationalError, OSError):
        if index is not None:
            index.close()
    index = SearchIndex(":memory:", tokenizer, fields=skill_fields)
    _catch_up(index, view)
    return index


def _document(view: Any, slug: str) -> dict[str, Any] | None:
    """The indexed form of an active skill (None: archived, gone, only proposed, or one
    that sets ``disable-model-invocation``)."""
    from ..kinds import skill as kind

    return document(view, kind.read_state(view, slug))


def _catch_up(index: SearchIndex, view: Any) -> None:
    """Re-index the skills whose tree changed since the indexed commit."""
    from ..kinds import skill as kind

    head = view.snap.commit
    with index.write():
        if index.meta("skill-format") != SKILL_FORMAT:
            index.reset()  # an index of an older shape: every skill is read again
            index.set_meta("skill-format", SKILL_FORMAT)
        if index.meta("commit") == head:
            return
        known: dict[str, str] = json.loads(index.meta("trees") or "{}")
        now = view.children(kind.DIRECTORY)
        if not known and index.count() == 0:  # a first build: one bulk load, not an add each
            index.rebuild(documents(view), str(head), bulk=True)
            index.set_meta("skill-format", SKILL_FORMAT)  # the load started a new index
        else:
            _apply_changes(index, view, known, now)
        index.set_meta("trees", json.dumps(now, sort_keys=True))
        index.set_meta("commit", str(head))


def _apply_changes(
    index: SearchIndex, view: Any, known: dict[str, str], now: dict[str, str]
) -> None:
    """Re-index the skills whose tree id changed between ``known`` and ``now``."""
    for slug in sorted(known.keys() - now.keys()):
        index.remove(slug)
    for slug in sorted(now):
        if known.get(slug) == now[slug]:
            continue
        doc = _document(view, slug)
        if doc is None:
            index.remove(slug)
        elif not index.holds(doc):  # a new draft beside a published revision: unchanged
            index.add(doc)


def after_commit(control: Path, tokenizer: Tokenizer, view: Any, parent: str | None) -> None:
    """Keep a skill index that reflected ``parent`` current with ``view``'s commit, which
    changed a skill (one that changed none: :func:`.freshness.carry`). A missing index,
    or one that reflected another commit, is left for the next recall."""
    path = control / SKILL_INDEX
    if parent is None or not path.is_file():
        return
    with (
        SearchIndex(path, tokenizer, fields=skill_fields) as index,
        unsynced_commits(index.conn),
    ):
        if reflects(path, index.meta("commit"), parent):
            _catch_up(index, view)


def reindex_skills(git: GitStore, cache_dir: Path, view: Any) -> int:
    """Build the skill index of ``view``'s commit from scratch (``git``: its repository),
    on both cores when the skills are many; the number of skills indexed."""
    from ..kinds import skill as kind
    from . import build, skilldoc

    control = git.control_dir
    remove_database(control / SKILL_INDEX)
    tokenizer = Tokenizer(cache_dir, whole=True)
    try:
        with _open(control, tokenizer) as index:
            now = view.children(kind.DIRECTORY)
            if now:
                trees = json.dumps(now, sort_keys=True)
                meta = {"skill-format": SKILL_FORMAT, "trees": trees}
                build.rebuild(index, git, view, source=skilldoc.source(git.path, view, meta))
            _catch_up(index, view)  # nothing left to do, or a store without skills
            return index.count()
    finally:
        tokenizer.close()
