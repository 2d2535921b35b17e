"""Walks over a repository's history and trees: ancestry (a plain parent walk) and the
leaves a commit brings on top of another (the incoming-tree gate's walk, bounded)."""

from __future__ import annotations

import stat
from collections.abc import Iterator

from dulwich.objects import ShaFile, Tree
from dulwich.repo import Repo

from ..errors import CorruptStoreError, InvalidInputError
from .objects import DIR_MODE, MAX_DEPTH, CommitId, CommitInfo, Leaf, Snapshot, load_object

__all__ = ["Walking"]

_TREES_KEPT = 256  # trees a walk keeps parsed, in case it meets them again


class Walking:
    """The walks of :class:`~.repo.Repository` (a mixin: it reads through its repo)."""

    _repo: Repo

    def snapshot(self, commit: CommitId | None = None) -> Snapshot:
        """A read-only view of ``commit`` (the repository's)."""
        raise NotImplementedError

    def commit_info(self, commit: CommitId) -> CommitInfo:
        """One commit's id, time, author, message and parents (the repository's)."""
        raise NotImplementedError

    def walk_leaves(
        self,
        base: CommitId | None,
        commit: CommitId,
        max_walk: int | None = None,
        origin: str = "the incoming commit",
    ) -> Iterator[Leaf]:
        """Every non-directory entry of ``commit`` not identical in ``base`` at its path.

        Subtrees whose id equals ``base``'s at the same path are skipped (the store's own
        tree is trusted), so a pull walks only what it brings. Names come raw: the caller
        decides which are acceptable. A tree nested deeper than any store path is refused,
        and so is one whose walk opens more than ``max_walk`` trees and entries in all (a
        few trees whose entries all point at the next name more paths than any walk can
        visit); ``origin`` names it in the refusal.
        """
        new_tree = self.snapshot(commit).tree_id
        old_tree = self.snapshot(base).tree_id if base is not None else None
        stack: list[tuple[tuple[bytes, ...], bytes, bytes | None]] = []
        if new_tree is not None:
            stack.append(((), new_tree, old_tree))
        walked = 0
        seen: dict[bytes, ShaFile] = {}
        while stack:
            prefix, sha, old = stack.pop()
            if sha == old:
                continue
            if len(prefix) > MAX_DEPTH:
                shown = b"/".join(prefix).decode("utf-8", "backslashreplace")
                raise InvalidInputError(f"Refused: {shown!r} is nested too deeply for a store.")
            tree = seen.get(sha)
            if tree is None:  # (an empty tree is falsy)
                tree = load_object(self._repo, sha)
            if not isinstance(tree, Tree):
                raise CorruptStoreError("A tree of the incoming commit is damaged.")
            if len(seen) >= _TREES_KEPT:
                seen.clear()
            seen[sha] = tree  # a tree met again (at another path) is not read again
            walked += 1 + len(tree)
            if max_walk is not None and walked > max_walk:
                raise InvalidInputError(
                    f"Refused {origin}: its tree has more than {max_walk:,} folders and entries, "
                    "more than a store within its limit of records holds; nothing changed."
                )
            before: dict[bytes, tuple[int, bytes]] = {}
            if old is not None:
                old_obj = load_object(self._repo, old)
                if isinstance(old_obj, Tree):
                    before = {i.path: (i.mode, i.sha) for i in old_obj.iteritems()}
            for item in tree.iteritems():
                parts = (*prefix, item.path)
                was = before.get(item.path)
                if stat.S_ISDIR(item.mode):
                    stack.append((parts, item.sha, was[1] if was and was[0] == DIR_MODE else None))
                elif was != (item.mode, item.sha):
                    yield Leaf(parts, item.mode, item.sha.decode())

    def is_ancestor(self, older: CommitId, newer: CommitId) -> bool:
        """True when ``older`` is reachable from ``newer`` (or equal).

        A plain walk over parents: dulwich's date-ordered ``can_fast_forward`` answers
        wrongly when commits share a timestamp, which xbrain's second-resolution commits
        often do (found by the two-device test).
        """
        seen: set[str] = set()
        todo = [str(newer)]
        while todo:
            commit = todo.pop()
            if commit == older:
                return True
            if commit in seen:
                continue
            seen.add(commit)
            todo.extend(self.commit_info(CommitId(commit)).parents)
        return False

    def merge_base(self, ours: CommitId, theirs: CommitId) -> CommitId | None:
        """The common ancestor nearest to ``theirs`` (None: none), walked as is_ancestor."""
        mine: set[str] = set()
        todo = [str(ours)]
        while todo:
            commit = todo.pop()
            if commit not in mine:
                mine.add(commit)
                todo.extend(self.commit_info(CommitId(commit)).parents)
        queue, seen = [str(theirs)], {str(theirs)}
        for commit in queue:  # breadth first: the queue grows while it is read
            if commit in mine:
                return CommitId(commit)
            parents = [p for p in self.commit_info(CommitId(commit)).parents if p not in seen]
            seen.update(parents)
            queue.extend(parents)
        return None
