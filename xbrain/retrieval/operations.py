"""Search over a store through the core: the slow path, reindex, write upkeep, doctor.

``run.search_store`` answers from a current index without touching git; everything
else comes here: searching an older revision, merging a provider's candidates, catching
the index up, rebuilding it, keeping it current after each commit (``upkeep``), and
checking it for ``doctor`` (``check_index``).
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import struct
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..core import Core, GitStore, View, private_umask
from ..errors import NotFoundError, XbrainError
from ..search import query as fast
from ..search import service
from ..search.index import SearchIndex
from ..search.skills import reindex_skills
from ..search.tokenize import Tokenizer
from ..sqlitefiles import remove_database

if TYPE_CHECKING:
    from ..embedding import ProviderSpec


class Provider(Protocol):
    """What search needs from a personal provider: its kind and its candidates."""

    kind: str

    def search(self, query: str, limit: int) -> list[dict[str, Any]]: ...


__all__ = [
    "build_from",
    "check_index",
    "rank",
    "reindex",
    "search",
]


def problem(code: str, message: str, path: str) -> dict[str, Any]:
    """One doctor line."""
    return {"code": code, "message": message, "path": path}


def search(
    core: Core,
    query: str,
    *,
    limit: int = 5,
    domain: str | None = None,
    feature: str | None = None,
    style: str | None = None,
    at: str | None = None,
    provider: Provider | None = None,
    progress: service.Progress | None = None,
) -> dict[str, Any]:
    """Ranked lexical candidates (private content), optionally as of revision ``at``.

    With a ``provider``, its candidates are merged: local wins, local tombstones hide
    remote copies, and the merged set is ranked together. A provider failure fails
    the search.
    """
    query = fast.validate_request(query, limit, domain, feature, style)
    filtered = bool(domain or feature or style)
    remote = provider.search(query, limit) if provider is not None else None
    tokenizer = Tokenizer(core.cache_dir)
    try:
        terms = tokenizer.query_terms(query)
        if not terms and not filtered:
            return {**fast.answer([], terms), "provider": provider and provider.kind}
        if not core.exists():
            core.check_dir()
            if at is not None:
                raise NotFoundError(f"Unknown revision: {at}")
            from ..search.index import SearchIndex

            with SearchIndex(":memory:", tokenizer) as memory:  # remote candidates only
                memory.rebuild(iter(remote or []), "remote")
                hits = memory.search(terms, limit, domain, feature, style)
            return {**fast.answer(hits, terms), "provider": provider and provider.kind}
        # (no fast path here: it only saves imports, which a library caller has paid)
        with core.git() as git, private_umask():  # the index stays private
            commit = git.resolve(at) if at is not None else git.head()
            view = View(git.snapshot(commit))
            view.config()
            found = service.search(
                git,
                view,
                tokenizer,
                query,
                limit=limit,
                domain=domain,
                feature=feature,
                style=style,
                at=at is not None,
                remote=remote,
                progress=progress,
            )
            return {**found, "provider": provider and provider.kind}
    finally:
        tokenizer.close()


def reindex(
    core: Core,
    progress: service.Progress | None = None,
    *,
    semantic: ProviderSpec | None = None,
    semantic_off: bool = False,
) -> dict[str, Any]:
    """Rebuild the derived indexes (resources, skills, entries) from the committed
    records; with ``semantic``, switch semantic recall on with that provider on this
    device and rebuild its vectors; with ``semantic_off``, switch it off."""
    from ..search import entrycache
    from ..semantic import vectors as semantic_index

    core.check_dir()
    if not core.exists():
        raise NotFoundError(f"No store at {core.path}; the first write creates it.")
    provider = None
    if semantic is not None:
        from ..embedding import load_provider

        provider = load_provider(semantic.check())  # before anything is rebuilt
    tokenizer = Tokenizer(core.cache_dir)
    started = time.perf_counter()
    try:
        with core.locked(), core.git() as git, private_umask():
            view = View(git.snapshot())
            count = service.reindex(git, view, tokenizer, progress)
            skills = reindex_skills(git, core.cache_dir, view)
            commit = view.snap.commit
        entrycache.rebuild(core.path, tokenizer)
    finally:
        tokenizer.close()
    result: dict[str, Any] = {
        "reindexed": count,
        "skills": skills,
        "commit": commit,
        "milliseconds": round((time.perf_counter() - started) * 1000),
    }
    control = core.path / ".git"
    if semantic_off:
        result["semantic"] = {"enabled": False, "removed": semantic_index.disable(control)}
    elif provider is not None and semantic is not None:
        result["semantic"] = semantic_index.rebuild(control, semantic, provider)
    return result


def check_index(
    git: GitStore,
    repair: bool,
    problems: list[dict[str, Any]],
    repaired: list[dict[str, Any]],
    *,
    cache_dir: Path,
) -> None:
    """A damaged search index is reported; repair deletes it (the next search rebuilds).

    An index in another layout (written by another xbrain version, or missing a table)
    is not damage: the next search rebuilds it, so it is not reported. Repair rebuilds it
    now for main (under the caller's store lock), with the segmenter in ``cache_dir``.
    """
    from ..search.index import layout_problem
    from ..search.query import INDEX_FILE, damaged

    path = git.control_dir / INDEX_FILE
    if not path.exists():
        return
    rel = str(path.relative_to(git.path))
    if damaged(path, "SELECT value FROM meta WHERE key = 'commit'"):
        if repair:
            remove_database(path)
            message = "Damaged index removed; search rebuilds it."
            repaired.append(problem("search_index", message, rel))
        else:
            message = "The search index is damaged (derived data)."
            problems.append(problem("search_index", message, rel))
        return
    outdated = layout_problem(path) if repair else None
    if outdated is None:
        return
    tokenizer = Tokenizer(cache_dir)
    try:
        with private_umask():
            service.reindex(git, View(git.snapshot()), tokenizer)
    except (XbrainError, sqlite3.Error, OSError) as exc:
        message = f"The search index ({outdated}) could not be rebuilt ({exc}); "
        message += "the next search builds it."
        problems.append(problem("search_index", message, rel))
        return
    finally:
        tokenizer.close()
    message = f"Index in another layout ({outdated}) rebuilt for main."
    repaired.append(problem("search_index", message, rel))


def check_vectors(
    git: Any, repair: bool, problems: list[dict[str, Any]], repaired: list[dict[str, Any]]
) -> None:
    """``doctor``: every vector file parses, has the rows its header lists, and holds
    finite unit vectors; a damaged one is reported, and removed with ``repair`` (the next
    semantic query, or ``reindex --semantic``, rebuilds it)."""
    try:
        import numpy as np
    except ImportError:  # the extra was removed: the vectors are unused, not wrong
        return

    from ..semantic.vectors import MAGIC, MAX_HEADER, VECTOR_DIR, load

    control: Path = git.control_dir
    for path in sorted((control / VECTOR_DIR).glob("*.bin")):
        rel = str(path.relative_to(git.path))
        try:
            with path.open("rb") as handle:
                if handle.read(8) != MAGIC:
                    raise ValueError("magic")
                (length,) = struct.unpack("<Q", handle.read(8))
                model = json.loads(handle.read(min(length, MAX_HEADER)))["model"]
            vectors = load(control, str(model))
            if vectors is None:  # an older format: the next semantic query embeds it again
                continue
            norms = np.linalg.norm(np.asarray(vectors.matrix), axis=1)
            ok = bool(np.isfinite(norms).all() and (np.abs(norms - 1) < 1e-3).all())
        except (OSError, ValueError, KeyError, TypeError, AssertionError, struct.error):
            ok = False
        except XbrainError:  # damaged beyond its header
            ok = False
        if ok:
            continue
        if repair:
            path.unlink(missing_ok=True)
            message = "Damaged vectors removed; xbrain reindex --semantic rebuilds them."
            repaired.append(problem("semantic_vectors", message, rel))
        else:
            message = "Semantic vectors are damaged (derived data)."
            problems.append(problem("semantic_vectors", message, rel))


def rank(
    resources: list[dict[str, Any]], query: str, limit: int, cache_dir: Path
) -> list[dict[str, Any]]:
    """``resources`` ranked for ``query`` in memory (a JSON provider's search; no filters)."""
    tokenizer = Tokenizer(cache_dir)
    try:
        terms = tokenizer.query_terms(query)
        if not terms:
            return []
        with SearchIndex(":memory:", tokenizer) as index:
            index.rebuild(iter(resources), "provider")
            return [hit.resource for hit in index.search(terms, limit)]
    finally:
        tokenizer.close()


def build_from(
    core: Core,
    commit: str,
    resources: list[dict[str, Any]],
    progress: service.Progress | None = None,
) -> None:
    """Build the index of ``commit`` from its live ``resources``, already parsed.

    After a bulk import the records are in memory: indexing them now spares the first
    search reading every record back from git. Derived data: a failure here leaves no
    index (the first search builds one) and never fails the command.
    """
    tokenizer = Tokenizer(core.cache_dir)
    try:
        with core.git() as git, private_umask():
            path = service.index_path(git)
            if path.exists() or git.head() != commit:
                return  # someone else indexed it, or the store moved on: the search catches up
            path.parent.mkdir(exist_ok=True)
            with contextlib.suppress(sqlite3.Error, OSError, XbrainError):
                with SearchIndex(path, tokenizer) as index:
                    index.rebuild(_told(resources, progress), commit, bulk=True)
                return
            remove_database(path)  # a half-written index is worse than none
    finally:
        tokenizer.close()


def _told(
    resources: list[dict[str, Any]], progress: service.Progress | None
) -> Iterator[dict[str, Any]]:
    """The resources, telling ``progress`` every 250 of them (step, total)."""
    for done, resource in enumerate(resources, 1):
        yield resource
        if progress is not None and (done % 250 == 0 or done == len(resources)):
            progress(done % 250 or 250, len(resources))
