"""The working tree and git index, kept in step with ``main`` without following links.

After the ref moves, the touched files and their index entries are refreshed; a marker
under ``.git/xbrain/`` names them until that is done, so a crash is finished later.
"""

from __future__ import annotations

import contextlib
import os
import stat
import struct
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import NamedTuple

from dulwich.errors import ChecksumMismatch
from dulwich.file import FileLocked

from ..errors import (
    ConflictError,
    CorruptStoreError,
    no_space,
)
from ..paths import path_problem
from . import index as gitindex
from .checkedout import blob_sha
from .checkout import Checkout
from .indexupdate import Update
from .objects import FILE_MODE, CommitId, Snapshot, private_umask
from .wtfiles import (
    MAX_WORKTREE_FILE,
    THREADED,
    Job,
    disk_full_refreshing,
    file_mode,
    place_files,
    prune_empty_dirs,
    read_worktree_file,
    regular_file,
)

__all__ = [
    "MAX_WORKTREE_FILE",
    "UnreadableIndex",
    "Worktree",
    "read_worktree_file",
    "regular_file",
]

# what dulwich raises for an index it cannot parse (a split index's "link" extension reads
# as a bad checksum)
_UNREADABLE_INDEX = (ChecksumMismatch, ValueError, struct.error, KeyError, IndexError)
Written = Mapping[str, bytes | None]  # path -> the bytes a commit wrote there (None: removed)


class UnreadableIndex(Exception):
    """The git index is in a form neither xbrain's editor nor dulwich reads."""


class Worktree(Checkout):
    """Refreshing, checking and listing the working tree and the git index."""

    def crashed_write_locks(self) -> list[Path]:
        """Git lock files left by an xbrain write that was killed mid-commit.

        Only meaningful while holding the store lock: the pending marker proves an xbrain
        write did not finish, and a ref/index lock no older than that marker is its own —
        unless the marker stayed because a git command held the index (``indexBusy``):
        then ``index.lock`` is that command's (``doctor --repair`` removes a stale one).
        """
        since = self.pending.written()
        if since is None:
            return []
        candidates = [self.control_dir / "refs" / "heads" / "main.lock"]
        if not self.pending.index_busy():
            candidates.append(self.control_dir / "index.lock")
        return [p for p in candidates if p.exists() and p.stat().st_mtime >= since]

    def pack_leftovers(self) -> list[Path]:
        """Files a killed pack write leaves in ``objects/pack`` (temp packs, index locks,
        packs without an index). Nothing references their objects: the ref moves only
        after the pack is complete."""
        pack_dir = self.control_dir / "objects" / "pack"
        if not pack_dir.is_dir():
            return []
        found = []
        for path in pack_dir.iterdir():
            name = path.name
            if (
                name.endswith(".lock")
                or (name.startswith("tmp") and name.endswith(".pack"))
                or (name.endswith(".pack") and not path.with_suffix(".idx").exists())
            ):
                found.append(path)
        return sorted(found)

    def pending_worktree_paths(self) -> list[str]:
        """Paths a crashed write may have left stale in the working tree."""
        return self.pending.paths()

    def refresh_worktree(
        self,
        commit: CommitId | None,
        paths: list[str],
        *,
        fresh: bool = False,
        catching_up: bool = False,
        written: Written | None = None,
        later: bool = False,
        in_place: Callable[[str], bool] | None = None,
    ) -> Callable[[], None]:
        """Make the working tree and git index match ``commit`` at ``paths``.

        Never follows a symbolic link: a link where a directory or file belongs is an
        error (``doctor --repair`` removes it), and files are replaced, not written
        through. Paths that are not plain store paths are never written. A file not there
        yet is created in place (the pending marker names it until the refresh is done), as
        every file is with ``fresh``: an empty working tree no one else can see yet (a
        clone being built). ``catching_up``: the files are an earlier write's (finished
        before a new one starts, or by doctor), so a full disk means nothing new was
        written, not that a change is committed.
        ``written``: bytes the commit just wrote at some of the paths, used when they are
        the blob the commit holds there (else the blob is read from the store).
        ``later``: the git index is written by a thread while the caller goes on (a
        commit's after-commit hooks), and so are the files of a big refresh (a batch's:
        writing them waits on the disk, the hooks on the interpreter); the function
        returned waits for them and finishes the refresh (the pending marker stays until
        then). Without it the refresh is done on return, and the function returned does
        nothing. ``in_place``: the paths whose file, when it is there already (a private
        regular file of one link), is rewritten in place rather than replaced (derived
        files no one edits: no inode made and freed for each).
        """
        try:
            plan = self._files_of(commit, paths, written or {}, in_place)
            stamp = self.control_dir / "xbrain" / "index-stamp"
            index = Path(self._repo.index_path())
            if later and len(plan.jobs) >= THREADED:
                update = Update(index, lambda: _apply(plan, fresh), stamp)
            else:
                with private_umask():
                    entries = _apply(plan, fresh)
                update = Update(index, entries, stamp)
        except OSError as exc:
            if not no_space(exc):
                raise
            raise disk_full_refreshing(commit, catching_up) from None

        def finish() -> None:
            try:
                self._finish_index(commit, update)
            except OSError as exc:
                if not no_space(exc):
                    raise
                raise disk_full_refreshing(commit, catching_up) from None

        if later:
            return finish
        finish()
        return _nothing

    def _files_of(
        self,
        commit: CommitId | None,
        paths: list[str],
        written: Written,
        in_place: Callable[[str], bool] | None,
    ) -> _Plan:
        """What a refresh to ``commit`` at ``paths`` writes and removes: each path checked
        (and its directories made) and its bytes found, here on the caller's thread (the
        store's objects are read by this thread only)."""
        snap = self.snapshot(commit)
        plan = _Plan(self.path, [], [], [])
        dirs: set[str] = set()
        with private_umask():
            for path in paths:
                target = self._worktree_target(path, create=True, dirs=dirs)
                blob = snap.blob_id(path)
                if blob is None:
                    plan.removed.append((path, target))
                    continue
                data = written.get(path)
                if data is None or blob_sha(data) != blob:
                    data = snap.blob(blob)
                plan.jobs.append((target, data, blob, in_place is not None and in_place(path)))
                plan.names.append(path.encode())
        return plan

    def _finish_index(self, commit: CommitId | None, update: Update) -> None:
        """Wait for the git index ``update``, do it the slow way if the editor could not,
        then drop the pending marker."""
        with private_umask():
            try:
                if not update.wait():
                    try:
                        self._update_index_slowly(dict(update.changes))
                    except _UNREADABLE_INDEX:  # a split or sparse index: neither reads it
                        self.rebuild_index(commit)
            except (gitindex.IndexLocked, FileLocked):
                self.pending.note_index_busy()  # the marker stays, the next write retries
                return
            self.pending.clear()

    def _worktree_target(self, path: str, *, create: bool, dirs: set[str] | None = None) -> Path:
        """``root/path`` after checking that no component is a link or a foreign name.
        ``dirs``: the directories this call's caller has checked already (a batch's
        thousands of paths share a few hundred), and adds to."""
        problem = path_problem(path)
        if problem is not None:
            raise CorruptStoreError(
                f"Refusing to write {path!r} in the working tree: it is {problem}."
            )
        root, rel = os.fspath(self.path), ""  # strings: a batch checks thousands of paths
        for part in path.split("/")[:-1]:
            rel = f"{rel}/{part}" if rel else part
            if dirs is not None and rel in dirs:
                continue
            current = os.path.join(root, rel)
            try:
                info = os.lstat(current)
            except FileNotFoundError:
                if not create:
                    continue
                os.mkdir(current, 0o700)
                if dirs is not None:
                    dirs.add(rel)
                continue
            if stat.S_ISLNK(info.st_mode):  # doctor --repair removes links, nothing else
                raise CorruptStoreError(
                    f"{rel} in the working tree is a symbolic link, not a directory; "
                    "run xbrain doctor --repair."
                )
            if not stat.S_ISDIR(info.st_mode):
                raise ConflictError(
                    f"{rel} in the working tree is a file where "
                    "xbrain keeps a directory; move it out of the store, then retry."
                )
            if dirs is not None:
                dirs.add(rel)
        target = self.path / path
        if stat.S_ISDIR(file_mode(target)):  # never removed: it may hold anything
            raise ConflictError(
                f"{path} in the working tree is a directory where xbrain keeps a file; move "
                "it out of the store, then retry."
            )
        return target

    def check_worktree_paths(self, paths: list[str]) -> None:
        """Fail before a commit when a path could not be written safely afterwards."""
        dirs: set[str] = set()
        for path in paths:
            self._worktree_target(path, create=False, dirs=dirs)

    def hand_edits(
        self, base: Snapshot, paths: list[str], new: Callable[[str], bytes | None]
    ) -> list[str]:
        """The ``paths`` whose working-tree file holds neither what ``base`` (the commit
        the write started from) has there nor ``new(path)``: local changes a write would
        replace (git refuses the same). A missing file, one that is not a regular file (a
        link: refused on its own) or git's CRLF copy of the committed file is not one; a
        file larger than any store file is."""
        edited = []
        for path in paths:
            current = read_worktree_file(self.path / path, MAX_WORKTREE_FILE)
            if current is None:
                if regular_file(self.path / path):
                    edited.append(path)
                continue
            if current == new(path):
                continue
            committed = base.blob_id(path)
            if self.hash_blob(current) == committed:
                continue
            # git's own checkout under a global core.autocrlf (a plain git clone of the
            # store): git status calls it clean, and no record file holds a CR
            if b"\r\n" in current and self.hash_blob(current.replace(b"\r\n", b"\n")) == committed:
                continue
            edited.append(path)
        return edited

    def worktree_links(self) -> list[str]:
        """Symbolic links in the working tree (outside ``.git``): never xbrain's own."""
        found = []
        for directory, dirs, names in os.walk(self.path):
            if directory == str(self.path):
                dirs[:] = [d for d in dirs if d != ".git"]
            for name in [*dirs, *names]:
                full = os.path.join(directory, name)
                if os.path.islink(full):
                    found.append(os.path.relpath(full, self.path))
        return sorted(found)

    def _update_index_slowly(self, entries: dict[bytes, bytes | None]) -> None:
        """dulwich's full rewrite, for index formats the fast editor leaves alone."""
        from dulwich.index import Index, index_entry_from_stat

        index = Index(self._repo.index_path())
        for path, entry in entries.items():
            if entry is None:
                if path in index:
                    del index[path]
            else:
                target = self.path / path.decode()
                blob = entry[40:60].hex().encode()
                index[path] = index_entry_from_stat(os.lstat(target), blob, FILE_MODE)
        index.write()

    def worktree_files(self) -> Iterator[str]:
        """Every file in the working tree (relative paths), outside ``.git``."""
        for directory, dirs, names in os.walk(self.path):
            dirs[:] = [d for d in dirs if not (directory == str(self.path) and d == ".git")]
            rel = os.path.relpath(directory, self.path)
            for name in names:
                yield name if rel == "." else f"{rel}/{name}"

    def index_sorted(self, repair: bool) -> bool:
        """Whether the git index is in path order; with ``repair``, put it in order."""
        path, stamp = Path(self._repo.index_path()), self.control_dir / "xbrain" / "index-stamp"
        try:
            if gitindex.in_order(path):
                return True
            if repair:
                with private_umask():
                    gitindex.sort_entries(path, stamp)
        except (gitindex.Unsupported, gitindex.IndexLocked, ValueError):
            return True  # an index git wrote in a form this editor leaves to git
        return False

    def index_paths(self) -> dict[str, str]:
        """Path → blob id of every git-index entry. Raises UnreadableIndex for an index
        neither this editor nor dulwich reads (git's split or sparse index)."""
        try:
            return gitindex.read_entries(Path(self._repo.index_path()))
        except (gitindex.Unsupported, ValueError):
            from dulwich.index import Index

            try:
                index = Index(self._repo.index_path())
            except _UNREADABLE_INDEX as exc:
                raise UnreadableIndex(str(exc)) from exc
            out: dict[str, str] = {}
            for path, entry in index.items():
                sha = getattr(entry, "sha", None)
                if sha is not None:
                    out[path.decode()] = sha.decode()
            return out

    def rebuild_index(self, commit: CommitId | None) -> None:
        """Write the git index afresh for ``commit``'s files, as one ``git read-tree``
        would: a file whose content is the committed one gets its stat data; any other
        gets none, so git looks at its content (and shows the edit) before trusting it.
        Other files a split index on a lost base names itself (staged there) stay."""
        entries, index = [], Path(self._repo.index_path())
        for path, blob in self.snapshot(commit).files():
            target, name = self.path / path, path.encode()
            data = read_worktree_file(target, MAX_WORKTREE_FILE)
            same = data is not None and self.hash_blob(data) == blob
            entries.append(
                (name, gitindex.entry_bytes(name, os.lstat(target) if same else None, blob))
            )
        names = {name for name, _ in entries}
        entries += [item for item in gitindex.own_entries(index) if item[0] not in names]
        with private_umask():
            gitindex.write_entries(index, entries, self.control_dir / "xbrain" / "index-stamp")


def _nothing() -> None:
    """What a refresh finished on return hands back."""


class _Plan(NamedTuple):
    """A refresh's files: (target, bytes, blob, rewritten in place) to write, their
    names, those to remove (path, target), the working tree's root."""

    root: Path
    jobs: list[Job]
    names: list[bytes]
    removed: list[tuple[str, Path]]


def _apply(plan: _Plan, fresh: bool) -> dict[bytes, bytes | None]:
    """Write and remove the files of ``plan``; the git-index entries of its paths. The
    files are written by a few threads when there are many (each create, rename and read
    waits on the disk, not on the interpreter); removals come last, so no directory a file
    goes into is pruned before it is written. Every file is created 0600 by name (no
    umask needed: this may run beside the caller's own work)."""
    entries: dict[bytes, bytes | None] = {}
    for name, (_, _, blob, _), info in zip(
        plan.names, plan.jobs, place_files(plan.jobs, fresh), strict=True
    ):
        entries[name] = gitindex.entry_bytes(name, info, blob)
    for path, target in plan.removed:
        with contextlib.suppress(FileNotFoundError):
            target.unlink()
        prune_empty_dirs(target.parent, plan.root)
        entries[path.encode()] = None
    return entries
