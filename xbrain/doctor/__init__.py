"""``xbrain doctor``: prove the store is consistent, and repair what is safe to repair.

Checks every record (parse, normalize, JSON Schema, canonical bytes, path), the catalog
and summary against the records, working-tree and git-index drift, permissions, stale
git lock files and object integrity. ``--repair`` (run under the store lock) rewrites
drifted working-tree files from ``main`` after copying any hand-edited content to
``.git/xbrain/rescued/``, fixes permissions, removes stale git locks, and commits a
rebuilt catalog. It never deletes untracked files and never rewrites history.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..core import (
    MAX_WORKTREE_FILE,
    WORKTREE_TEMP,
    Core,
    GitStore,
    StoreConfig,
    UnreadableIndex,
    View,
    file_mode_problems,
    fix_file_modes,
    layout,
    private_umask,
    read_worktree_file,
    regular_file,
)
from ..core.registry import record_kinds
from ..errors import CorruptStoreError
from ..kinds.skillcheck import skill_counts, skill_problems
from ..messages import commit_message
from ..paths import path_problem
from .gc import object_counts
from .records import check_catalog, check_records, check_tree, problem

__all__ = ["Check", "diagnose", "run"]

# a feature's check of its own derived data: (git, repair, problems, repaired)
Check = Callable[[GitStore, bool, list[dict[str, Any]], list[dict[str, Any]]], None]
STALE_LOCK_SECONDS = 60


def run(core: Core, *, repair: bool = False, checks: tuple[Check, ...] = ()) -> dict[str, Any]:
    """Check (and with ``repair``, fix, under the store lock) the store at ``core``."""
    core.existing()
    if not repair:
        idle = core.idle()  # no write running: an object's lock is a killed write's
        with core.git() as git:
            return diagnose(git, repair=False, checks=checks, idle=idle)
    with core.locked(), core.git() as git:
        return diagnose(git, repair=True, checks=checks)


def diagnose(
    git: GitStore, *, repair: bool, checks: tuple[Check, ...] = (), idle: bool = False
) -> dict[str, Any]:
    """Run every check; with ``repair``, fix what is safe and report what was done.

    ``checks`` are the features' own checks of their derived data (the search index);
    ``idle``: no xbrain write was running when the check began.
    """
    problems: list[dict[str, Any]] = []
    repaired: list[dict[str, Any]] = []
    if repair:
        for lock in [*git.crashed_write_locks(), *git.objects_pending.clear()]:
            lock.unlink(missing_ok=True)
            rel = str(lock.relative_to(git.path))
            repaired.append(problem("git_lock", "Lock left by a killed xbrain write removed.", rel))
    for leftover in git.pack_leftovers():
        rel = str(leftover.relative_to(git.path))
        if repair:
            leftover.unlink(missing_ok=True)
            repaired.append(problem("pack_leftover", "Removed what a killed write left.", rel))
        else:
            problems.append(problem("pack_leftover", "Left by a killed write (unreferenced).", rel))
    for leftover in git.merge_leftovers(remove=repair):
        rel = str(leftover.relative_to(git.path))
        if repair:
            repaired.append(problem("pack_leftover", "Removed what a killed pack merge left.", rel))
        else:
            problems.append(problem("pack_leftover", "Left by a killed pack merge.", rel))
    damaged = git.damaged_packs()
    for pack, damage in damaged:
        rel = str(pack.relative_to(git.path))
        problems.append(problem("git_pack", f"Damaged pack: {damage}.", rel))
    midx = git.stale_multi_pack_index(repair)
    if midx is not None:
        rel, message = ".git/objects/pack/multi-pack-index", f"Git's multi-pack-index: {midx}"
        if repair:
            repaired.append(problem("git_midx", f"{message}; removed (git works without).", rel))
        else:
            problems.append(problem("git_midx", f"{message}.", rel))
    for line in [] if damaged else git.fsck():  # each object of a damaged pack: noise
        problems.append(problem("git_object", line))
    if repair and not git.line_endings_kept():  # older stores, plain git clones
        git.keep_line_endings()
        message = "core.autocrlf set to false: git's checkouts here keep files as stored."
        repaired.append(problem("git_config", message, ".git/config"))
    if repair and (names := git.keep_private_settings()):  # plain git clones
        message = f"{' and '.join(names)} set: git's own writes here stay private."
        repaired.append(problem("git_config", message, ".git/config"))
    for check in checks:
        check(git, repair, problems, repaired)
    head = git.head()
    try:
        view = View(git.snapshot(head))
        try:
            config = view.config()
        except CorruptStoreError as exc:
            problems.append(problem("invalid_config", str(exc), layout.MARKER))
            config = StoreConfig()
        check_tree(git, head, problems)
        live: dict[str, dict[str, Any]] = {}
        expected = check_records(view, problems, live)
        for code, message, path in skill_problems(view):
            problems.append(problem(code, message, path))
        skills = skill_counts(view)
        fixes = check_catalog(view, expected, problems, live)
    except CorruptStoreError as exc:
        # Damaged objects: report, and leave repair to a backup (remote verify / clone).
        problems.append(problem("git_object", str(exc)))
        return _report(git, head, {}, {}, problems, repaired, {})
    if repair and fixes:
        message = commit_message("doctor", [], None, subject="doctor: rebuild catalog")
        head = git.commit(head, fixes, message, config.identity, int(time.time()))
        git.refresh_worktree(head, list(fixes))
        view = View(git.snapshot(head))
        repaired.append(
            problem("catalog_drift", "Catalog rebuilt from records.", layout.CATALOG_DIR)
        )
        problems = [p for p in problems if p["code"] != "catalog_drift"]

    for link in git.worktree_links():
        if repair:
            os.unlink(git.path / link)  # the link only; whatever it points at is untouched
            repaired.append(problem("worktree_link", "Symbolic link removed.", link))
        else:
            problems.append(
                problem(
                    "worktree_link", "A symbolic link in the working tree (not xbrain's).", link
                )
            )
    if git.pending_worktree_paths():
        problems.append(
            problem(
                "worktree_pending",
                "An interrupted write left the working tree behind; the next write, or "
                "xbrain doctor --repair, finishes it.",
            )
        )
    if not git.index_sorted(repair=False):
        if repair:
            git.index_sorted(repair=True)
            repaired.append(
                problem("index_order", "Git index entries put back in order.", ".git/index")
            )
        else:
            problems.append(
                problem(
                    "index_order",
                    "Git index entries are out of order (git fsck fails).",
                    ".git/index",
                )
            )
    elsewhere = git.checked_out()
    if elsewhere is not None:  # the user's own checkout: theirs to move back
        problems.append(
            problem(
                "checked_out",
                f"HEAD is at {elsewhere}, not main; xbrain reads and writes main: run "
                "git checkout main.",
                "HEAD",
            )
        )
    index: dict[str, str] | None
    try:
        index = git.index_paths()
    except UnreadableIndex:
        index = None
        if repair:
            git.rebuild_index(head)
            index = git.index_paths()
            message = (
                "Git index written afresh from main (it was a split index on a missing or "
                "damaged base, or a sparse index); changes staged to files of that base "
                "could not be read and are no longer staged."
            )
            repaired.append(problem("git_index", message, ".git/index"))
        else:
            message = (
                "The git index is in a form xbrain cannot read or edit (a split index on a "
                "missing or damaged base, or a sparse index): changes staged to files of "
                "its base cannot be read, and are lost when doctor --repair (or the next "
                "write) writes it afresh from main; files staged past the base are kept."
            )
            problems.append(problem("git_index", message, ".git/index"))
    drift, untracked = _worktree_drift(git, view, index)
    drift = [path for path in drift if path_problem(path) is None]  # never written
    for path in drift:
        problems.append(problem("worktree_drift", "Working tree or index differs from main.", path))
    for path in [p for p in untracked if p.endswith(WORKTREE_TEMP)]:
        untracked.remove(path)
        if repair:
            (git.path / path).unlink(missing_ok=True)
            repaired.append(
                problem("worktree_leftover", "Removed a killed write's temp file.", path)
            )
        else:
            problems.append(problem("worktree_leftover", "Temp file of a killed write.", path))
    for path in untracked:
        problems.append(
            problem("untracked_file", "File not in the store's history (left alone).", path)
        )
    if repair and (drift or git.pending_worktree_paths()):
        kept: list[str] = []  # regular files no copy could be made of: never replaced
        rescued = git.control_dir / "xbrain" / "rescued"
        rescue: Path | None = None  # made for the first copy
        with private_umask():
            for path in drift:
                data = read_worktree_file(git.path / path, MAX_WORKTREE_FILE)
                if data is None:  # gone, a link, or a file too large (or unreadable)
                    if regular_file(git.path / path):
                        kept.append(path)
                    continue
                rescue = rescue or _rescue_folder(rescued)
                _keep_copy(rescue / path, data, rescued)
        drift = [path for path in drift if path not in kept]
        pending = set(git.pending_worktree_paths()) - {"*"}
        git.refresh_worktree(head, sorted(set(drift) | pending), catching_up=True)
        for path in drift:
            repaired.append(
                problem(
                    "worktree_drift", f"Restored from main; old copy in {rescue or rescued}.", path
                )
            )
        problems = [p for p in problems if p["code"] not in ("worktree_drift", "worktree_pending")]
        for path in kept:  # no copy could be kept, so the file is not replaced
            message = (
                "No copy could be kept (larger than any store file, or unreadable): "
                "move it out of the store, then repair."
            )
            problems.append(problem("worktree_drift", message, path))

    for path in file_mode_problems(git.path):
        problems.append(problem("permissions", "Readable or writable by group or others.", path))
    if repair and any(p["code"] == "permissions" for p in problems):
        fix_file_modes(git.path, layout.is_derived)
        repaired.append(problem("permissions", "Group and other permissions removed."))
        problems = [p for p in problems if p["code"] != "permissions"]

    now = time.time()
    objects = git.control_dir / "objects"
    marked = git.objects_pending.locks()  # what the next write removes
    for lock in git.stale_git_locks():
        age = now - lock.stat().st_mtime
        rel = str(lock.relative_to(git.path))
        # under the store lock an object's lock can only be a dead xbrain writer's
        dead_writer = repair and lock.is_relative_to(objects)
        if not repair and idle and lock.is_relative_to(objects):
            by = "the next write (or doctor --repair)" if lock in marked else "doctor --repair"
            message = f"Left by a killed xbrain write; {by} removes it."
            problems.append(problem("git_lock", message, rel))
        elif age < STALE_LOCK_SECONDS and not dead_writer:
            message = (
                "A git lock under a minute old: a writer holds it, or was just killed "
                "(doctor --repair removes it once it is a minute old)."
            )
            problems.append(problem("git_lock", message, rel))
        elif repair:
            lock.unlink(missing_ok=True)
            repaired.append(problem("git_lock", "Stale lock removed.", rel))
        else:
            problems.append(problem("git_lock", "Stale lock left by a killed git writer.", rel))

    return _report(git, head, expected, view.summary(), problems, repaired, skills)


def _report(
    git: GitStore,
    head: str | None,
    expected: dict[str, dict[str, Any]],
    totals: dict[str, int],
    problems: list[dict[str, Any]],
    repaired: list[dict[str, Any]],
    skills: dict[str, int],
) -> dict[str, Any]:
    return {
        "ok": not problems,
        "store": str(git.path),
        "commit": head,
        "checked": {
            **_counts(expected),
            **skills,
            "summary": totals,
            "objects": object_counts(git),
            "indexBases": git.index_bases(),
        },
        "problems": problems,
        "repaired": repaired,
    }


def _worktree_drift(
    git: GitStore, view: View, index: dict[str, str] | None
) -> tuple[list[str], list[str]]:
    """(tracked paths whose working-tree file or index entry differs, untracked files).
    ``index``: the git index's entries, or None when it cannot be read (reported on its
    own): then the files alone are compared."""
    committed = dict(view.snap.files())
    if index is None:
        index = committed
    drift = []
    for path, blob in committed.items():
        data = read_worktree_file(git.path / path, MAX_WORKTREE_FILE)  # links never followed
        if data is None or GitStore.hash_blob(data) != blob or index.get(path) != blob:
            drift.append(path)
    drift.extend(path for path in index if path not in committed)
    untracked = [path for path in git.worktree_files() if path not in committed]
    return sorted(set(drift)), sorted(untracked)


def _counts(expected: dict[str, dict[str, Any]]) -> dict[str, int]:
    """Records checked per kind, every registered kind (zero when it has none)."""
    counts = {}
    for spec in record_kinds():
        found = sum(1 for e in expected.values() if e["path"].startswith(spec.directory + "/"))
        counts[spec.summary_key] = found
    return counts


def _keep_copy(copy: Path, data: bytes, rescued: Path) -> None:
    """Write ``data`` to ``copy``; a copy that could not be written whole (a full disk)
    is removed with the folders it emptied, so no partial copy passes for the file (the
    error then stops the repair before anything is replaced)."""
    copy.parent.mkdir(parents=True, exist_ok=True)
    try:
        copy.write_bytes(data)
    except OSError:
        copy.unlink(missing_ok=True)
        folder = copy.parent
        while folder != rescued.parent and not any(folder.iterdir()):
            folder.rmdir()
            folder = folder.parent
        raise


def _rescue_folder(base: Path) -> Path:
    """A new folder for the copies one repair keeps, named by the time: a second repair
    in the same second gets its own (it used to write over the first one's copies)."""
    base.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M%S")
    folder, n = base / stamp, 1
    while True:
        try:
            folder.mkdir()
            return folder
        except FileExistsError:
            n += 1
            folder = base / f"{stamp}-{n}"
