"""``xbrain doctor``: prove the store is consistent, and repair what is safe to repair.

Checks every record (parse, normalize, JSON Schema, canonical bytes, path), the catalog
and summary against the records, working-tree and git-index drift, permissions, stale
git lock files and object integrity. ``--repair`` (run under the store lock) rewrites
drifted working-tree files from ``main`` after copying any hand-edited content to
``.git/xbrain/rescued/``, fixes permissions, removes stale git locks, and commits a
rebuilt catalog. It never deletes untracked files and never rewrites history.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path
from typing import Any

from . import layout
from .codec import dump_yaml
from .errors import CorruptStoreError, XbrainError
from .git import (
    FILE_MODE,
    WORKTREE_TEMP,
    CommitId,
    GitStore,
    file_mode_problems,
    fix_file_modes,
    private_umask,
    read_worktree_file,
)
from .messages import commit_message
from .model import parse_record
from .paths import component_problem, path_problem
from .schemas import schema_errors
from .view import StoreConfig, View, catalog_entry, derived_files

__all__ = ["diagnose"]

STALE_LOCK_SECONDS = 60
MAX_WORKTREE_FILE = 64 * 1024 * 1024  # larger than any store file: read no further


def _problem(code: str, message: str, path: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"code": code, "message": message}
    if path is not None:
        out["path"] = path
    return out


def _check_records(
    view: View, problems: list[dict[str, Any]], urls: dict[str, str] | None = None
) -> dict[str, dict[str, Any]]:
    """Validate each record file; return the catalog the records imply."""
    catalog: dict[str, dict[str, Any]] = {}
    for kind, directory in (
        ("resource", layout.RESOURCES_DIR),
        ("tombstone", layout.TOMBSTONES_DIR),
    ):
        for path, blob in view.snap.files(directory):
            rid = Path(path).stem
            if not path.endswith(".yaml") or layout.record_path(kind, rid) != path:
                problems.append(_problem("misplaced_record", "Unexpected file in records.", path))
                continue
            data = view.snap.blob(blob)
            try:
                record = parse_record(kind, data)
            except XbrainError as exc:
                problems.append(_problem("invalid_record", str(exc), path))
                continue
            if record["id"] != rid:
                problems.append(_problem("misplaced_record", "File name differs from id.", path))
                continue
            for error in schema_errors(kind, record):
                problems.append(_problem("schema", error, path))
            if dump_yaml(record) != data:
                problems.append(
                    _problem("not_normalized", "Stored form differs from the normalized one.", path)
                )
            if rid in catalog:
                problems.append(_problem("duplicate_id", "Id is both live and deleted.", path))
            catalog[rid] = catalog_entry(kind, record)
            if kind == "resource" and urls is not None:
                urls[rid] = record["source"]["url"]
    return catalog


def _check_tree(git: GitStore, head: CommitId | None, problems: list[dict[str, Any]]) -> None:
    """Paths of ``main`` that have no place in a store, and state files that do not validate.

    A store only gets such paths from a commit made outside xbrain; they are reported,
    never written to the working tree.
    """
    from .intake import content_problem

    if head is None:
        return
    for leaf in git.walk_leaves(None, head):
        path = b"/".join(leaf.parts).decode("utf-8", "backslashreplace")
        unsafe = next(filter(None, (component_problem(p) for p in leaf.parts)), None)
        kind = None if unsafe else layout.classify(path)
        if unsafe or leaf.mode != FILE_MODE or kind is None:
            why = unsafe or (
                "not a regular file" if leaf.mode != FILE_MODE else "not in the layout"
            )
            problems.append(_problem("unsafe_path", f"Not a store file ({why}).", path))
        elif kind not in ("resource", "tombstone", "marker"):
            problem = content_problem(kind, path, git.snapshot(head).blob(leaf.sha))
            if problem is not None:
                problems.append(_problem("invalid_state", problem, path))


def _check_catalog(
    view: View,
    expected: dict[str, dict[str, Any]],
    problems: list[dict[str, Any]],
    urls: dict[str, str],
) -> dict[str, bytes | None]:
    """Compare the committed derived files with the records; return the files that fix them."""
    fixes: dict[str, bytes | None] = {}
    want: dict[str, bytes | None] = dict(derived_files(expected, urls))
    want_summary = want.pop(layout.SUMMARY)
    urls_present = view.snap.listdir(layout.URLS_DIR)
    if not urls_present:  # a store from before the URL index: its next write builds it
        want = {path: data for path, data in want.items() if layout.classify(path) != "urls"}
    present = {f"{layout.CATALOG_DIR}/{n}" for n in view.snap.listdir(layout.CATALOG_DIR)}
    present |= {f"{layout.URLS_DIR}/{n}" for n in urls_present}
    for path in sorted(present | set(want)):
        if view.read(path) != want.get(path):
            what = "URL index" if layout.classify(path) == "urls" else "Catalog shard"
            problems.append(_problem("catalog_drift", f"{what} disagrees with records.", path))
            fixes[path] = want.get(path)
    empty = not expected and view.read(layout.SUMMARY) is None  # a new store
    if not empty and view.read(layout.SUMMARY) != want_summary:
        problems.append(
            _problem("catalog_drift", "Summary disagrees with records.", layout.SUMMARY)
        )
        fixes[layout.SUMMARY] = want_summary
    return fixes


def _worktree_drift(git: GitStore, view: View) -> tuple[list[str], list[str]]:
    """(tracked paths whose working-tree file or index entry differs, untracked files)."""
    committed = dict(view.snap.files())
    index = git.index_paths()
    drift = []
    for path, blob in committed.items():
        data = read_worktree_file(git.path / path, MAX_WORKTREE_FILE)  # links never followed
        if data is None or GitStore.hash_blob(data) != blob or index.get(path) != blob:
            drift.append(path)
    drift.extend(path for path in index if path not in committed)
    untracked = [path for path in git.worktree_files() if path not in committed]
    return sorted(set(drift)), sorted(untracked)


def _check_search_index(
    git: GitStore, repair: bool, problems: list[dict[str, Any]], repaired: list[dict[str, Any]]
) -> None:
    """A damaged search index is reported; repair deletes it (the next search rebuilds)."""
    import sqlite3

    path = git.control_dir / "xbrain" / "search.sqlite"
    if not path.exists():
        return
    try:
        with contextlib.closing(sqlite3.connect(path)) as conn:
            ok = conn.execute("PRAGMA quick_check").fetchone()[0] == "ok"
            conn.execute("SELECT value FROM meta WHERE key = 'commit'").fetchone()
    except sqlite3.Error:
        ok = False
    if ok:
        return
    rel = str(path.relative_to(git.path))
    if repair:
        from .search.index import remove_index

        remove_index(path)
        repaired.append(_problem("search_index", "Damaged index removed; search rebuilds it.", rel))
    else:
        problems.append(
            _problem("search_index", "The search index is damaged (derived data).", rel)
        )


def diagnose(git: GitStore, *, repair: bool) -> dict[str, Any]:
    """Run every check; with ``repair``, fix what is safe and report what was done."""
    problems: list[dict[str, Any]] = []
    repaired: list[dict[str, Any]] = []
    if repair:
        for lock in git.crashed_write_locks():
            lock.unlink(missing_ok=True)
            rel = str(lock.relative_to(git.path))
            repaired.append(
                _problem("git_lock", "Lock left by a killed xbrain write removed.", rel)
            )
    for leftover in git.pack_leftovers():
        rel = str(leftover.relative_to(git.path))
        if repair:
            leftover.unlink(missing_ok=True)
            repaired.append(_problem("pack_leftover", "Removed what a killed write left.", rel))
        else:
            problems.append(
                _problem("pack_leftover", "Left by a killed write (unreferenced).", rel)
            )
    for line in git.fsck():
        problems.append(_problem("git_object", line))
    _check_search_index(git, repair, problems, repaired)
    head = git.head()
    try:
        view = View(git.snapshot(head))
        try:
            config = view.config()
        except CorruptStoreError as exc:
            problems.append(_problem("invalid_config", str(exc), layout.MARKER))
            config = StoreConfig()
        _check_tree(git, head, problems)
        urls: dict[str, str] = {}
        expected = _check_records(view, problems, urls)
        fixes = _check_catalog(view, expected, problems, urls)
    except CorruptStoreError as exc:
        # Damaged objects: report, and leave repair to a backup (remote verify / clone).
        problems.append(_problem("git_object", str(exc)))
        return _report(git, head, {}, {}, problems, repaired)
    if repair and fixes:
        message = commit_message("doctor", [], None, subject="doctor: rebuild catalog")
        head = git.commit(head, fixes, message, config.identity, int(time.time()))
        git.refresh_worktree(head, list(fixes))
        view = View(git.snapshot(head))
        repaired.append(
            _problem("catalog_drift", "Catalog rebuilt from records.", layout.CATALOG_DIR)
        )
        problems = [p for p in problems if p["code"] != "catalog_drift"]

    for link in git.worktree_links():
        if repair:
            os.unlink(git.path / link)  # the link only; whatever it points at is untouched
            repaired.append(_problem("worktree_link", "Symbolic link removed.", link))
        else:
            problems.append(
                _problem(
                    "worktree_link", "A symbolic link in the working tree (not xbrain's).", link
                )
            )
    if git.pending_worktree_paths():
        problems.append(
            _problem("worktree_pending", "An interrupted write left the working tree behind.")
        )
    if not git.index_sorted(repair=False):
        if repair:
            git.index_sorted(repair=True)
            repaired.append(
                _problem("index_order", "Git index entries put back in order.", ".git/index")
            )
        else:
            problems.append(
                _problem(
                    "index_order",
                    "Git index entries are out of order (git fsck fails).",
                    ".git/index",
                )
            )
    drift, untracked = _worktree_drift(git, view)
    drift = [path for path in drift if path_problem(path) is None]  # never written
    for path in drift:
        problems.append(
            _problem("worktree_drift", "Working tree or index differs from main.", path)
        )
    for path in [p for p in untracked if p.endswith(WORKTREE_TEMP)]:
        untracked.remove(path)
        if repair:
            (git.path / path).unlink(missing_ok=True)
            repaired.append(
                _problem("worktree_leftover", "Removed a killed write's temp file.", path)
            )
        else:
            problems.append(_problem("worktree_leftover", "Temp file of a killed write.", path))
    for path in untracked:
        problems.append(
            _problem("untracked_file", "File not in the store's history (left alone).", path)
        )
    if repair and (drift or git.pending_worktree_paths()):
        rescue = git.control_dir / "xbrain" / "rescued" / time.strftime("%Y%m%dT%H%M%S")
        with private_umask():
            for path in drift:
                current = read_worktree_file(git.path / path, MAX_WORKTREE_FILE)
                if current is not None:
                    copy = rescue / path
                    copy.parent.mkdir(parents=True, exist_ok=True)
                    copy.write_bytes(current)
        git.refresh_worktree(head, sorted(set(drift) | set(git.pending_worktree_paths()) - {"*"}))
        for path in drift:
            repaired.append(
                _problem("worktree_drift", f"Restored from main; old copy in {rescue}.", path)
            )
        problems = [p for p in problems if p["code"] not in ("worktree_drift", "worktree_pending")]

    for path in file_mode_problems(git.path):
        problems.append(_problem("permissions", "Readable or writable by group or others.", path))
    if repair and any(p["code"] == "permissions" for p in problems):
        fix_file_modes(git.path)
        repaired.append(_problem("permissions", "Group and other permissions removed."))
        problems = [p for p in problems if p["code"] != "permissions"]

    now = time.time()
    objects = git.control_dir / "objects"
    for lock in git.stale_git_locks():
        age = now - lock.stat().st_mtime
        rel = str(lock.relative_to(git.path))
        # under the store lock an object's lock can only be a dead xbrain writer's
        dead_writer = repair and lock.is_relative_to(objects)
        if age < STALE_LOCK_SECONDS and not dead_writer:
            problems.append(_problem("git_lock", "A git writer holds this lock right now.", rel))
        elif repair:
            lock.unlink(missing_ok=True)
            repaired.append(_problem("git_lock", "Stale lock removed.", rel))
        else:
            problems.append(_problem("git_lock", "Stale lock left by a killed git writer.", rel))

    return _report(git, head, expected, view.summary(), problems, repaired)


def _report(
    git: GitStore,
    head: str | None,
    expected: dict[str, dict[str, Any]],
    totals: dict[str, int],
    problems: list[dict[str, Any]],
    repaired: list[dict[str, Any]],
) -> dict[str, Any]:
    return {
        "ok": not problems,
        "store": str(git.path),
        "commit": head,
        "checked": {
            "resources": sum(1 for e in expected.values() if e["path"].startswith("resources/")),
            "tombstones": sum(1 for e in expected.values() if e["path"].startswith("tombstones/")),
            "summary": totals,
        },
        "problems": problems,
        "repaired": repaired,
    }
