"""Writing commits: blobs and trees straight into the object store, then a CAS on main.

A crash before the ref moves leaves only unreachable objects; the paths the move makes
stale are recorded first, so the next write finishes refreshing them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path

from dulwich.file import FileLocked
from dulwich.objects import Blob, Commit, ObjectID, ShaFile, Tree

from ..errors import (
    BusyError,
    ConflictError,
    CorruptStoreError,
    no_space,
)
from .loose import add_loose
from .objects import DIR_MODE, FILE_MODE, MAIN, CommitId, disk_full, load_object, private_umask
from .packwrite import write_pack
from .repo import Repository
from .treeedit import edited_tree

__all__ = ["Writer"]

_PACK_THRESHOLD = 64  # more new objects than this go into one pack, not loose files


class Writer(Repository):
    """Commits and the compare-and-swap of ``main``."""

    def _build_tree(
        self,
        base: bytes | None,
        changes: dict[bytes, bytes | None],
        out: list[ShaFile],
        load: Callable[[bytes], ShaFile] | None = None,
    ) -> bytes | None:
        """The tree ``base`` with ``changes`` (path → bytes, None deletes) applied, its new
        objects appended to ``out``; None when it ends empty. ``load`` reads an existing
        tree (default: from the repository; a history rewrite reads its own first).

        An existing tree is read from the repository's tree cache (a write's staging read
        it already) and edited in its serialized bytes (:func:`.treeedit.edited_tree`)."""
        old: Tree | None = None
        if base is not None:
            found = load(base) if load is not None else self.trees.get(self._repo, base)
            if not isinstance(found, Tree):
                raise CorruptStoreError("Store tree is damaged; run xbrain doctor.")
            old = found
        edits: dict[bytes, tuple[int, bytes] | None] = {}
        nested: dict[bytes, dict[bytes, bytes | None]] = {}
        for path, data in changes.items():
            head, sep, rest = path.partition(b"/")
            if sep:
                nested.setdefault(head, {})[rest] = data
            elif data is None:
                edits[head] = None
            else:
                blob = Blob.from_string(data)
                out.append(blob)
                edits[head] = (FILE_MODE, bytes(blob.id))
        for name, sub in nested.items():
            sub_base = None
            if old is not None and name in old:
                mode, sha = old[name]
                sub_base = sha if mode == DIR_MODE else None
            sub_id = self._build_tree(sub_base, sub, out, load)
            edits[name] = None if sub_id is None else (DIR_MODE, sub_id)
        tree = edited_tree(old, edits)
        if len(tree) == 0 and base is not None:
            return None
        out.append(tree)
        return bytes(tree.id)

    def commit(
        self,
        parent: CommitId | None,
        changes: Mapping[str, bytes | None],
        message: str,
        identity: str,
        when: int,
        merged: CommitId | None = None,
    ) -> CommitId:
        """Commit ``changes`` (path → bytes, or None to delete) on top of ``parent``.

        ``merged`` adds a second parent (a merge commit).

        Moves ``main`` only if it still equals ``parent``; otherwise ConflictError and
        nothing visible changed.
        """
        commit = self.write_commit(parent, changes, message, identity, when, merged)
        self.move_main(parent, commit, identity, message, paths=list(changes))
        return commit

    def write_commit(
        self,
        parent: CommitId | None,
        changes: Mapping[str, bytes | None],
        message: str,
        identity: str,
        when: int,
        merged: CommitId | None = None,
    ) -> CommitId:
        """Store a commit of ``changes`` on top of ``parent`` without moving any ref."""
        with private_umask():
            objects: list[ShaFile] = []
            base = None
            if parent is not None:
                parent_obj = load_object(self._repo, parent.encode())
                assert isinstance(parent_obj, Commit)
                base = parent_obj.tree
            encoded = {path.encode(): data for path, data in changes.items()}
            tree_id = self._build_tree(base, encoded, objects)
            if tree_id is None:  # every file removed: an empty root tree
                empty = Tree()
                objects.append(empty)
                tree_id = bytes(empty.id)
            commit = Commit()
            commit.tree = ObjectID(tree_id)
            commit.parents = [ObjectID(parent.encode())] if parent else []
            if merged is not None:
                commit.parents.append(ObjectID(merged.encode()))
            commit.author = commit.committer = identity.encode()
            commit.author_time = commit.commit_time = when
            commit.author_timezone = commit.commit_timezone = 0
            commit.encoding = b"UTF-8"
            commit.message = message.encode()
            objects.append(commit)
            self._add_objects(objects)
            for obj in objects:  # the refresh after the commit reads them again
                if isinstance(obj, Tree):
                    self.trees.add(obj)
            return CommitId(commit.id.decode())

    def _add_objects(self, objects: list[ShaFile]) -> None:
        """Write objects (one pack when many), clearing what a killed writer left.

        Callers hold the store lock, so an object's ``.lock`` file can only be the
        leftover of a writer that died: it is removed and the write retried once. The
        loose objects being added are named in a marker first, so the next write removes
        the locks of the others too (:class:`~.pending.ObjectsMarker`).
        """
        store = self._repo.object_store
        try:
            if len(objects) > _PACK_THRESHOLD:  # a killed one leaves pack_leftovers()
                write_pack(store, objects)
                return
            self.objects_pending.begin([obj.id for obj in objects])
            for _ in range(len(objects)):  # a killed writer's lock, each removed once
                try:
                    add_loose(store, objects)  # synced together, then renamed into place
                    break
                except FileLocked as exc:
                    Path(os.fsdecode(exc.lockfilename)).unlink(missing_ok=True)
            else:
                add_loose(store, objects)
            self.objects_pending.end()
        except OSError as exc:
            if no_space(exc):
                raise disk_full() from None
            raise

    def move_main(
        self,
        old: CommitId | None,
        new: CommitId,
        identity: str,
        message: str,
        paths: list[str] | None = None,
    ) -> None:
        """Compare-and-swap ``main`` from ``old`` to ``new`` (a stored commit).

        ``paths`` are the working-tree files the move makes stale (default: all of
        ``new``); they are recorded first, so a crash right after is finished later.
        """
        target = load_object(self._repo, new.encode())
        assert isinstance(target, Commit)
        reflog = b"xbrain: " + message.splitlines()[0].encode()[:200] if message else b"xbrain"
        with private_umask():
            previous = self.pending.add(
                new, paths if paths is not None else [p for p, _ in self.snapshot(new).files()]
            )
            try:
                moved = self._move_main(old, target, identity, reflog)
            except BaseException as exc:
                if self.head() != new:  # (a reflog that failed after the move: it moved)
                    self.pending.restore(previous)
                if isinstance(exc, FileLocked):
                    raise BusyError(
                        "A git command is updating the store (refs/heads/main.lock); retry, "
                        "or run xbrain doctor --repair if no git command is running."
                    ) from None
                if no_space(exc):
                    raise disk_full() from None
                raise
            if not moved:
                self.pending.restore(previous)
                raise ConflictError(
                    "The store changed during this write (outside xbrain?); retry the command."
                )

    def _move_main(
        self, parent: CommitId | None, commit: Commit, identity: str, reflog: bytes
    ) -> bool:
        """CAS ``main`` from ``parent`` to ``commit`` (create it for the first commit)."""
        if parent is None:
            return bool(
                self._repo.refs.add_if_new(
                    MAIN, commit.id, committer=identity.encode(), message=reflog
                )
            )
        return bool(
            self._repo.refs.set_if_equals(
                MAIN,
                ObjectID(parent.encode()),
                commit.id,
                committer=identity.encode(),
                message=reflog,
            )
        )
