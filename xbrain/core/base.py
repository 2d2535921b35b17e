"""The store core: one directory, its lock, read views, and every write as one transaction.

A write takes the cross-process store lock, reads the head commit, stages changes in a
``Transaction``, and commits them in one compare-and-swap. Reads take no lock: they read
whatever commit ``main`` points at, which is always complete. A missing store reads as
empty; the first write creates it. The core knows no feature: what must follow a commit
(keeping a derived index current) registers itself in ``after_commit``.
"""

from __future__ import annotations

import contextlib
import os
import stat
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ..errors import (
    BusyError,
    ConflictError,
    CorruptStoreError,
    InvalidInputError,
    NotFoundError,
    XbrainError,
)
from ..git import CommitId, GitStore, UnreadableIndex, private_umask
from ..inputs import check_store_dir, read_file
from ..messages import commit_message, validate_agent
from ..timestamps import now_timestamp
from ..userdirs import cache_dir as user_cache_dir
from . import journal, layout
from .config import DEFAULT_IDENTITY, marker_bytes
from .lock import StoreLock
from .registry import max_bytes, record_kinds
from .view import Transaction, View

__all__ = ["AfterCommit", "Core", "new_store_path", "refuse_hand_edits"]

# (git, parent, commit, changes) after a commit moved main; failures are the hook's own
AfterCommit = Callable[[GitStore, CommitId | None, CommitId, dict[str, bytes | None]], None]
LOCK_NAME = "xbrain.lock"


def new_store_path(path: Path) -> Path:
    """Where a new store at ``path`` is made: the directory a symbolic link there names
    (the link is kept). A folder inside another store's working tree is refused: the new
    repository would sit among that store's records as files it does not know."""
    real = Path(os.path.realpath(path))
    for folder in real.parents:
        if (folder / ".git").is_dir() and _is_marker(folder / layout.MARKER):
            raise InvalidInputError(
                f"{path} is inside the store {folder}; choose a folder outside it."
            )
    return real


def _is_marker(path: Path) -> bool:
    """True when ``path`` is a store's marker file (its format line), not any file that
    happens to share its name (read only if regular, and no more than a marker holds)."""
    try:
        return layout.FORMAT.encode() in read_file(path, max_bytes("marker"), "")
    except XbrainError:
        return False


class Core:
    """An xbrain store at ``path`` (a git repository with a working tree)."""

    def __init__(
        self,
        path: Path,
        *,
        wait: float = 0.0,
        agent: str | None = None,
        clock: Callable[[], str] = now_timestamp,
        cache_dir: Path | None = None,
        allow_secrets: frozenset[str] = frozenset(),
    ) -> None:
        self.path = Path(path).absolute()
        # the compiled Chinese dictionary: the user's, as the CLI's (built once per user)
        self.cache_dir = cache_dir or user_cache_dir()
        self.wait = wait
        self.agent = validate_agent(agent)
        self.allow_secrets = allow_secrets  # detectors --allow-secret lets through
        self.clock = clock
        self.after_commit: list[AfterCommit] = []
        # commit as this identity instead of the store's own (a share or review in a team
        # store is committed by the member who made it)
        self.identity: str | None = None
        self._committing: Transaction | None = None  # while its after-commit hooks run

    def exists(self) -> bool:
        """True when the directory holds a git repository."""
        return (self.path / ".git").is_dir()

    def check_dir(self) -> None:
        """Refuse a path that is a file, or a non-empty directory that is not a store."""
        check_store_dir(self.path)

    def export_target(self, target: Path, force: bool = False, *, folder: bool = False) -> Path:
        """An export's destination, absolute. One inside the store is refused (it would
        sit among the records as a file the store does not know), and so is an existing
        one unless ``force``. ``folder``: the export writes files into a directory (an
        existing one is the caller's to check), else it writes one file."""
        target = target.absolute()
        if target.resolve().is_relative_to(self.path.resolve()):
            raise InvalidInputError("Export target must be outside the store directory.")
        try:
            mode: int | None = (os.stat if folder else os.lstat)(target).st_mode
        except FileNotFoundError:
            mode = None
        if folder:
            if mode is not None and not stat.S_ISDIR(mode):
                raise InvalidInputError(f"{target} is not a folder; export to a folder path.")
            return target
        # --force replaces a file (or a link, never followed), not a device or a FIFO:
        # as root, exporting to /dev/full replaced the device with a regular file
        if mode is not None and not (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
            raise InvalidInputError(f"{target} is not a regular file; export to a file path.")
        if not force and (target.exists() or target.is_symlink()):
            raise ConflictError(f"{target} exists; pass --force to overwrite it.")
        return target

    def existing(self) -> None:
        """Refuse unless the store exists (commands that never create one)."""
        self.check_dir()
        if not self.exists():
            raise NotFoundError(f"No store at {self.path}; the first write creates it.")

    def git(self) -> GitStore:
        """The store's repository (close it, or use it as a context manager)."""
        return GitStore(self.path)

    @contextlib.contextmanager
    def reading(self) -> Iterator[View | None]:
        """A view of the head commit, or None when the store does not exist yet."""
        self.check_dir()
        if not self.exists():
            yield None
            return
        with GitStore(self.path) as git:
            view = View(git.snapshot())
            if view.snap.commit is None:
                raise CorruptStoreError(
                    f"Not an xbrain store (a git repository with no commit on main): {self.path}"
                )
            view.config()
            yield view

    def create(self) -> None:
        """Create the store with its first commit, unless it exists."""
        self.check_dir()
        if self.exists():
            return
        where = new_store_path(self.path)
        message = commit_message("init", [], self.agent, subject="init: create xbrain store")
        GitStore.create(
            where,
            {layout.MARKER: marker_bytes()},
            message,
            DEFAULT_IDENTITY,
            int(time.time()),
        )

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the cross-process store lock (waiting up to ``wait`` seconds)."""
        lock = StoreLock(self.path / ".git" / LOCK_NAME)
        if not lock.acquire(self.wait):
            raise BusyError("Memory store is busy; retry after the other command finishes.")
        try:
            yield
        finally:
            lock.release()

    def staged_record(
        self, path: str, data: bytes, *, parsed: bool = False
    ) -> dict[str, Any] | None:
        """For an after-commit hook: the record the commit being made staged at ``path``
        as ``data`` (``Transaction.staged_record``; ``parsed``: only one staged as what
        its kind's parse gives), so the hook need not parse ``data`` again; None outside
        a hook, or when the bytes came another way."""
        txn = self._committing
        return None if txn is None else txn.staged_record(path, data, parsed=parsed)

    def committing(self) -> str | None:
        """For an after-commit hook: the command of the commit being made (``put``,
        ``import-store``); None outside a hook."""
        return None if self._committing is None else self._committing.command

    def idle(self) -> bool:
        """Whether no write holds the store lock right now (taken and let go at once, so
        a caller never holds writers back; False when the lock cannot even be tried)."""
        lock = StoreLock(self.path / ".git" / LOCK_NAME)
        try:
            if not lock.acquire(0):
                return False
        except (OSError, XbrainError):  # a read-only store, a filesystem without flock
            return False
        lock.release()
        return True

    @contextlib.contextmanager
    def transaction(self, command: str) -> Iterator[Transaction]:
        """Lock, stage, commit (if anything changed) and refresh the working tree."""
        with self.session() as git:
            txn = self.begin(git, command)
            txn.allow_secrets = self.allow_secrets
            yield txn
            self.commit(git, txn)

    @contextlib.contextmanager
    def session(self) -> Iterator[GitStore]:
        """The store, created if missing, locked, with any interrupted write finished."""
        self.create()
        with self.locked(), GitStore(self.path) as git:
            for leftover in [*git.crashed_write_locks(), *git.pack_leftovers()]:
                leftover.unlink(missing_ok=True)
            git.keep_git_files_private()  # a plain git command's COMMIT_EDITMSG, FETCH_HEAD
            git.objects_pending.clear()  # the locks of loose objects a killed write was adding
            pending = git.pending_worktree_paths()
            if pending:
                _repair_worktree(git, pending)
            yield git
            # derived storage: a failure leaves the packs as they were, for the next write
            with contextlib.suppress(OSError, XbrainError), private_umask():
                git.keep_packs(lambda: _records_bytes(git))

    @staticmethod
    def begin(git: GitStore, command: str) -> Transaction:
        """A transaction on top of the head commit (inside ``session``); what it reads
        comes from the working tree where the files there are the commit's."""
        snap = git.snapshot(checked_out=True)
        view = View(snap)
        view.require_derived()  # never build counts on a catalog that is gone
        return Transaction(snap, view.config(), command)

    def commit(self, git: GitStore, txn: Transaction) -> None:
        """Commit what ``txn`` staged (nothing staged: no commit)."""
        changes = txn.finish()
        if not changes:
            return
        allowed = sorted({(f.detector, f.field) for f in txn.allowed_secrets})
        message = commit_message(
            txn.command,
            txn.actions,
            self.agent,
            txn.subject,
            [("Xbrain-Allowed-Secret", f"{detector} in {field}") for detector, field in allowed],
        )
        parent = txn.snap.commit
        git.check_worktree_paths(list(changes))  # a planted link fails before the commit
        refuse_hand_edits(git, git.hand_edits(txn.snap, list(changes), changes.get))
        identity = self.identity or txn.settings.identity
        commit = git.commit(parent, changes, message, identity, int(time.time()))
        # the git index is written beside the hooks (a second core), then waited for
        finish = git.refresh_worktree(
            commit, list(changes), written=changes, later=True, in_place=layout.is_derived
        )
        txn.commit_id = str(commit)
        self._committing = txn
        try:
            for hook in self.after_commit:
                hook(git, parent, commit, changes)
        finally:
            self._committing = None
            finish()
        with contextlib.suppress(OSError), private_umask():
            journal.note(git.control_dir, commit, list(changes))


def refuse_hand_edits(git: GitStore, paths: list[str]) -> None:
    """Stop a write that would replace edits made by hand in the working tree (or files
    a plain ``git checkout`` of another branch or commit put there)."""
    if not paths:
        return
    elsewhere = git.checked_out()
    if elsewhere is not None:
        raise ConflictError(
            f"The store's working tree is checked out at {elsewhere}, not main, and this "
            f"write would replace its files: run git checkout main in {git.path}, then retry."
        )
    more = f" (and {len(paths) - 1} more)" if len(paths) > 1 else ""
    top = paths[0].split("/", 1)[0]
    if any(spec.directory == top for spec in record_kinds()):
        advice = "keep them with xbrain adopt, or drop them with xbrain doctor --repair"
    else:  # settings or data derived from the records: nothing to adopt
        advice = "xbrain doctor --repair restores the committed file and keeps your copy aside"
    raise ConflictError(
        f"{paths[0]}{more} has changes made by hand that this write would replace: "
        f"{advice}, then retry."
    )


def _repair_worktree(git: GitStore, paths: list[str]) -> None:
    if paths == ["*"]:
        head = git.head()
        try:
            indexed = set(git.index_paths())
        except UnreadableIndex:  # the refresh writes it afresh
            indexed = set()
        paths = sorted({p for p, _ in git.snapshot(head).files()} | indexed)
    git.refresh_worktree(git.head(), paths, catching_up=True)


def _records_bytes(git: GitStore) -> int:
    """What the records take at the head, as its committed summary counts them (the pack
    upkeep asks, past a few MB of packs, to tell history that outgrew them)."""
    total = View(git.snapshot()).summary().get("bytes", 0)
    return total if isinstance(total, int) else 0
