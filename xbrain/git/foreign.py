"""Reading files out of someone else's repository (``skill import GIT-URL``).

A remote repository is fetched with dulwich into a private scratch repository that is
deleted afterwards, what it sends held to a ``PackBound`` before anything is indexed; a
repository on this machine is read in place and never written. Nothing of it enters the
store's object database. One ref (a branch, a tag, the HEAD, or a commit named by its
full id) is wanted; the files under one directory of its commit are read with every
bound checked before an object is inflated (sizes come from the object headers):
regular files only (a link or submodule is refused), at most ``max_files`` files, each
at most ``max_bytes``, no deeper than ``max_depth``.
"""

from __future__ import annotations

import contextlib
import re
import stat
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import NamedTuple

from dulwich.objects import Blob, Commit, ObjectID, ShaFile, Tag, Tree
from dulwich.refs import Ref

from ..errors import CorruptStoreError, InvalidInputError, NotFoundError, ProviderError
from ..paths import git_own_name
from ..redact import redact_url
from .objects import DAMAGE
from .packcheck import PackBound, amount
from .repo import Repository
from .scratch import scratch_dir, sweep_dead
from .transport import Transport, local_path

__all__ = ["ForeignTree", "Limits", "PackBound", "read_foreign_tree"]

_SKIP = {b"__MACOSX", b".DS_Store"}  # and git's own files: paths.git_own_name
_COMMIT_ID = re.compile(r"[0-9a-f]{40}")


class Limits(NamedTuple):
    """How much of a foreign tree may be read, and what its repository may send."""

    max_files: int
    max_bytes: int
    max_depth: int
    pack: PackBound

    @property
    def max_trees(self) -> int:
        """Directories a walk may open: one for each level above every file allowed."""
        return self.max_files * self.max_depth

    @property
    def max_entries(self) -> int:
        """Entries a walk may read in all: each of those directories and files, and as
        many again for names skipped on the way (``.DS_Store``, git's own files)."""
        return 2 * self.max_trees


class ForeignTree(NamedTuple):
    """The files found (path → bytes), the commit they came from, what was skipped, and
    the files git records as executable (mode 100755)."""

    commit: str
    files: dict[str, bytes]
    skipped: list[str]
    executable: set[str]


def _pinned(ref: str | None) -> ObjectID | None:
    """The commit id ``ref`` is, when it is one (40 lower-case hex digits)."""
    return ObjectID(ref.encode()) if ref is not None and _COMMIT_ID.fullmatch(ref) else None


def _candidates(ref: str | None) -> list[bytes]:
    if ref is None:
        return [b"HEAD"]
    raw = ref.encode()
    if raw.startswith(b"refs/"):
        return [raw]
    return [b"refs/heads/" + raw, b"refs/tags/" + raw]


def read_foreign_tree(
    url: str, ref: str | None, path: str | None, limits: Limits, scratch: Path | None = None
) -> ForeignTree:
    """Fetch ``ref`` of ``url`` and read the files under ``path`` of its commit.

    A repository on this machine is read in place (nothing copied, nothing written): only
    the objects on the way to ``path`` and under it are read, each size checked first.
    Another is fetched into a scratch repository under ``scratch`` (a private directory;
    None: the system's temporary directory), removed afterwards; those that imports
    killed mid-way left there are removed first.
    """
    if scratch is not None:
        sweep_dead(scratch)
    local = local_path(url)
    if local is not None:
        try:
            source = _Foreign(Path(local))
        except CorruptStoreError:
            raise InvalidInputError(f"{local} is not a git repository.") from None
        with source, _damage_is_theirs(local):
            sha = _pinned(ref) or source.local_ref(_candidates(ref))
            if sha is None or not source.holds(sha):
                raise NotFoundError(f"The repository at {local} has no {_named(ref)}.")
            return source.read_under(sha, path or "", limits)
    with scratch_dir(scratch) as work:
        Repository.init_bare(work / "repo")
        with _Foreign(work / "repo") as repo, _damage_is_theirs(redact_url(url)):
            sha = repo.fetch_one(url, _candidates(ref), limits.pack, _pinned(ref))
            if sha is None or not repo.holds(sha):
                raise NotFoundError(f"The repository at {redact_url(url)} has no {_named(ref)}.")
            return repo.read_under(sha, path or "", limits)


@contextlib.contextmanager
def _damage_is_theirs(shown: str) -> Iterator[None]:
    """An object of someone else's repository missing or unreadable: its damage, said as
    a remote failure (ProviderError), never a store's corruption or dulwich's words."""
    try:
        yield
    except (KeyError, CorruptStoreError, *DAMAGE) as exc:
        raise ProviderError(
            f"The repository at {shown} is damaged (a git object of it is missing or "
            "cannot be read); nothing was imported. Check it with git fsck."
        ) from exc


def _named(ref: str | None) -> str:
    if ref is None:
        return "HEAD"
    return f"commit {ref!r}" if _pinned(ref) else f"branch or tag {ref!r}"


class _Foreign(Transport):
    """Someone else's repository: a throwaway bare one that one ref is fetched into, or
    one on this machine, read in place and never written."""

    def fetch_one(
        self, url: str, names: list[bytes], bound: PackBound, pinned: ObjectID | None = None
    ) -> ObjectID | None:
        """Fetch the first of ``names`` the remote has (or the commit ``pinned``, which a
        server may refuse unless a ref points at it) at depth 1; its id, or None."""
        wanted: list[ObjectID] = []

        def wants(refs: Mapping[Ref, ObjectID], depth: int | None = None) -> list[ObjectID]:
            if pinned is not None:
                wanted.append(pinned)
                return [pinned]
            for name in names:
                sha = refs.get(Ref(name))
                if sha is not None:
                    wanted.append(sha)
                    return [sha]
            return []

        self.fetch_wanted(url, wants, bound, depth=1)  # one commit, no history
        return wanted[0] if wanted else None

    def holds(self, sha: ObjectID) -> bool:
        """True when the repository has the object ``sha``."""
        return sha in self._repo.object_store

    def local_ref(self, names: list[bytes]) -> ObjectID | None:
        """The commit (or tag) the first of ``names`` points at in this repository."""
        for name in names:
            try:
                return self._repo.refs[Ref(name)]
            except (KeyError, ValueError, OSError):
                continue
        return None

    def read_under(self, sha: ObjectID, path: str, limits: Limits) -> ForeignTree:
        obj = self._object(sha, limits)
        for _ in range(10):  # a tag of a tag of …, bounded
            if not isinstance(obj, Tag):
                break
            obj = self._object(obj.object[1], limits)
        if not isinstance(obj, Commit):
            raise InvalidInputError("The ref does not name a commit.")
        tree = self._object(obj.tree, limits)
        for part in [p for p in path.strip("/").split("/") if p]:
            if not isinstance(tree, Tree) or part.encode() not in tree:
                raise NotFoundError(f"The repository has no directory {path!a}.")
            mode, child = tree[part.encode()]
            if not stat.S_ISDIR(mode):
                raise InvalidInputError(f"{path!a} in the repository is not a directory.")
            tree = self._object(child, limits)
        if not isinstance(tree, Tree):
            raise InvalidInputError(f"{path or '/'!a} in the repository is not a directory.")
        found = ForeignTree(obj.id.decode(), {}, [], set())
        self._collect(tree, "", found, limits, [0, 0])
        return found

    def _object(self, sha: ObjectID, limits: Limits) -> ShaFile:
        """An object of the repository, its size read from its header before it is."""
        size = self.blob_size(sha.decode())
        if size is not None and size > limits.pack.max_object:
            raise InvalidInputError(
                f"The repository holds an object of {size:,} bytes; the limit is "
                f"{amount(limits.pack.max_object)}.{limits.pack.advice}"
            )
        return self._repo[sha]

    def _collect(
        self, tree: Tree, prefix: str, found: ForeignTree, limits: Limits, walked: list[int]
    ) -> None:
        """Read the files of ``tree`` into ``found``; ``walked`` counts the trees opened and
        the entries read, held to the limits' bounds (a tree whose entries all point at
        the next one names more paths than any walk could visit)."""
        walked[0] += 1
        walked[1] += len(tree)
        if walked[0] > limits.max_trees or walked[1] > limits.max_entries:
            raise InvalidInputError(
                f"The directory is too big to import: more than {limits.max_trees:,} folders "
                f"or {limits.max_entries:,} entries in all (a skill holds at most "
                f"{limits.max_files} files, {limits.max_depth} levels deep)."
            )
        for item in tree.items():
            shown = prefix + item.path.decode("utf-8", "backslashreplace")
            if item.path in _SKIP or git_own_name(shown.rpartition("/")[2]):
                found.skipped.append(shown)
                continue
            if item.mode == 0o160000:
                raise InvalidInputError(f"{shown!a} in the repository is a submodule.")
            if stat.S_ISLNK(item.mode):
                raise InvalidInputError(f"{shown!a} in the repository is a symbolic link.")
            if stat.S_ISDIR(item.mode):
                if prefix.count("/") + 1 >= limits.max_depth:
                    raise InvalidInputError(f"{shown!a} is deeper than {limits.max_depth} levels.")
                sub = self._object(item.sha, limits)
                if not isinstance(sub, Tree):
                    raise InvalidInputError(f"{shown!a} in the repository is not a directory.")
                self._collect(sub, shown + "/", found, limits, walked)
                continue
            if len(found.files) >= limits.max_files:
                raise InvalidInputError(f"The directory holds more than {limits.max_files} files.")
            size = self.blob_size(item.sha.decode())  # from the header: no bomb is inflated
            if size is not None and size > limits.max_bytes:
                raise InvalidInputError(
                    f"{shown!a} is {size:,} bytes; the limit is {limits.max_bytes // 1024} KiB."
                )
            blob = self._repo[item.sha]
            if not isinstance(blob, Blob) or len(blob.data) > limits.max_bytes:
                raise InvalidInputError(f"{shown!a} in the repository is not a file within bounds.")
            found.files[shown] = bytes(blob.data)
            if item.mode == 0o100755:
                found.executable.add(shown)
