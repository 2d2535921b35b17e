"""Rewriting history (``xbrain purge``): every commit of ``main`` again, with some blobs
edited, then the old objects removed.

The rewrite only adds objects; ``main`` then moves by the usual compare-and-swap, so a
crash at any instant leaves either the old history or the new one (``prune.Pruner.prune``
removes the old objects afterwards).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from dulwich.objects import Blob, Commit, ObjectID, ShaFile, Tree

from .objects import DIR_MODE, CommitId, load_object, private_umask
from .prune import Pruner

__all__ = ["Rewrite", "Rewriter", "TreeReader"]

Edit = Callable[[str, bytes], bytes | None]


class TreeReader:
    """The files of one tree (made by a rewrite or stored): read, list, walk."""

    def __init__(self, owner: Rewriter, tree: bytes, result: Rewrite) -> None:
        self._owner, self._tree, self._result = owner, tree, result

    def _entry(self, path: str) -> ShaFile | None:
        sha = self._tree
        for name in path.encode().split(b"/") if path else []:
            obj = self._owner.load(sha, self._result)
            if not isinstance(obj, Tree) or name not in obj:
                return None
            sha = bytes(obj[name][1])
        return self._owner.load(sha, self._result)

    def read(self, path: str) -> bytes | None:
        """A file's bytes, or None."""
        blob = self._entry(path)
        return blob.as_raw_string() if isinstance(blob, Blob) else None

    def listdir(self, path: str) -> list[str]:
        """Names directly under a directory."""
        tree = self._entry(path.rstrip("/"))
        if not isinstance(tree, Tree):
            return []
        return [item.path.decode("utf-8", "surrogateescape") for item in tree.iteritems()]

    def files(self, prefix: str) -> Iterator[tuple[str, bytes]]:
        """Every file ``(path, bytes)`` under ``prefix``."""
        for name in self.listdir(prefix):
            path = f"{prefix.rstrip('/')}/{name}"
            entry = self._entry(path)
            if isinstance(entry, Tree):
                yield from self.files(path)
            elif isinstance(entry, Blob):
                yield path, entry.as_raw_string()


# (the rebuilt commit, the original, paths that changed) → files to overlay
Fix = Callable[[TreeReader, TreeReader, list[str]], dict[str, bytes | None]]


@dataclass
class Rewrite:
    """What a rewrite changed: the new head, and how many commits, blobs and paths."""

    head: CommitId | None
    commits: int = 0
    blobs: int = 0
    paths: set[str] = field(default_factory=set)
    objects: list[ShaFile] = field(default_factory=list)
    new: dict[bytes, ShaFile] = field(default_factory=dict)  # objects made, by id
    replaced: set[str] = field(default_factory=set)  # the old commits rewritten
    roots: list[str] = field(default_factory=list)  # those whose parents were not

    def add(self, obj: ShaFile) -> None:
        """Keep a new object (stored later, by ``store_rewrite``)."""
        self.objects.append(obj)
        self.new[bytes(obj.id)] = obj


class Rewriter(Pruner):
    """History rewriting and pruning for purge."""

    def rewrite(
        self, edit: Edit, edit_message: Callable[[str], str], fix: Fix | None = None
    ) -> Rewrite:
        """Every commit reachable from ``main`` rebuilt with ``edit(path, data)`` applied to
        each blob (None drops the file), then, where its tree changed, the files ``fix``
        returns for it overlaid (what the changed paths imply: catalog, summary), and
        ``edit_message`` applied to its message. Objects are collected, not stored
        (``store_rewrite`` stores them); ``main`` does not move."""
        head = self.head()
        result = Rewrite(head)
        if head is None:
            return result
        trees: dict[tuple[str, bytes], bytes | None] = {}
        blobs: dict[tuple[str, bytes], bytes | None] = {}
        commits: dict[bytes, bytes] = {}
        for sha in self._topological(head.encode()):
            old = load_object(self._repo, sha)
            assert isinstance(old, Commit)
            tree = self._rewrite_tree("", old.tree, edit, trees, blobs, result)
            if fix is not None and tree is not None and tree != old.tree:
                changed = sorted(self._diff(bytes(old.tree), tree, "", result))
                extra = fix(
                    TreeReader(self, tree, result),
                    TreeReader(self, bytes(old.tree), result),
                    changed,
                )
                if extra:
                    encoded = {path.encode(): data for path, data in extra.items()}
                    tree = self._overlay(tree, encoded, result)
            if tree is None:  # every file removed: an empty root tree
                empty = Tree()
                result.add(empty)
                tree = bytes(empty.id)
            message = edit_message(old.message.decode("utf-8", "replace"))
            parents = [commits[p] for p in old.parents]
            if (
                tree == old.tree
                and parents == list(old.parents)
                and message.encode() == old.message
            ):
                commits[sha] = sha
                continue
            new = Commit()
            new.tree = ObjectID(tree)
            new.parents = [ObjectID(p) for p in parents]
            new.author, new.committer = old.author, old.committer
            new.author_time, new.commit_time = old.author_time, old.commit_time
            new.author_timezone, new.commit_timezone = old.author_timezone, old.commit_timezone
            new.encoding = old.encoding
            new.message = message.encode()
            result.add(new)
            result.commits += 1
            result.replaced.add(sha.decode())
            if not any(p.decode() in result.replaced for p in old.parents):
                result.roots.append(sha.decode())
            commits[sha] = bytes(new.id)
        result.head = CommitId(commits[head.encode()].decode())
        return result

    def load(self, sha: bytes, result: Rewrite) -> ShaFile:
        """An object made by this rewrite, or a stored one."""
        found = result.new.get(sha)
        return found if found is not None else load_object(self._repo, sha)

    def _overlay(
        self, base: bytes | None, changes: dict[bytes, bytes | None], result: Rewrite
    ) -> bytes | None:
        """``base`` with ``changes`` (path → bytes, None deletes) applied, as a write builds
        it, reading the rewrite's own new trees first; None if empty."""
        made: list[ShaFile] = []
        tree_id = self._build_tree(base, changes, made, lambda sha: self.load(sha, result))
        for obj in made:
            result.add(obj)
        return tree_id

    def _diff(self, old: bytes | None, new: bytes | None, prefix: str, result: Rewrite) -> set[str]:
        """The file paths that differ between two trees (skipping equal subtrees)."""
        if old == new:
            return set()
        entries: dict[bytes, list[tuple[int, bytes] | None]] = {}
        for side, sha in enumerate((old, new)):
            if sha is None:
                continue
            tree = self.load(sha, result)
            assert isinstance(tree, Tree)
            for item in tree.iteritems():
                entries.setdefault(item.path, [None, None])[side] = (item.mode, bytes(item.sha))
        out: set[str] = set()
        for name, (before, after) in entries.items():
            if before == after:
                continue
            path = prefix + name.decode("utf-8", "surrogateescape")
            dirs = [x[1] if x and x[0] == DIR_MODE else None for x in (before, after)]
            if dirs[0] or dirs[1]:
                out |= self._diff(dirs[0], dirs[1], path + "/", result)
            if any(x and x[0] != DIR_MODE for x in (before, after)):
                out.add(path)
        return out

    def store_rewrite(self, rewrite: Rewrite) -> None:
        """Store the objects of ``rewrite`` (``main`` still does not move)."""
        with private_umask():
            self._add_objects(rewrite.objects)

    def _rewrite_tree(
        self,
        prefix: str,
        sha: bytes,
        edit: Edit,
        trees: dict[tuple[str, bytes], bytes | None],
        blobs: dict[tuple[str, bytes], bytes | None],
        result: Rewrite,
    ) -> bytes | None:
        key = (prefix, sha)
        if key in trees:
            return trees[key]
        old = load_object(self._repo, sha)
        assert isinstance(old, Tree)
        tree = Tree()
        for item in old.iteritems():
            name = item.path.decode("utf-8", "surrogateescape")
            path = f"{prefix}{name}"
            if item.mode == DIR_MODE:
                new = self._rewrite_tree(f"{path}/", item.sha, edit, trees, blobs, result)
            else:
                new = self._rewrite_blob(path, item.sha, edit, blobs, result)
            if new is not None:
                tree.add(item.path, item.mode, ObjectID(new))
        out: bytes | None = None
        if len(tree):
            out = bytes(tree.id)
            if out != sha:
                result.add(tree)
        trees[key] = out
        return out

    def _rewrite_blob(
        self,
        path: str,
        sha: bytes,
        edit: Edit,
        blobs: dict[tuple[str, bytes], bytes | None],
        result: Rewrite,
    ) -> bytes | None:
        key = (path, sha)
        if key not in blobs:
            old = load_object(self._repo, sha)
            assert isinstance(old, Blob)
            data = edit(path, old.as_raw_string())
            if data is None:
                blobs[key] = None
                result.paths.add(path)
            elif data == old.as_raw_string():
                blobs[key] = sha
            else:
                blob = Blob.from_string(data)
                result.add(blob)
                result.blobs += 1
                result.paths.add(path)
                blobs[key] = bytes(blob.id)
        return blobs[key]
