"""Remotes: fetch into a quarantine, push as a compare-and-swap, remote settings.

Everything a remote sends is hostile until the caller has checked it.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import tempfile
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

from dulwich.file import FileLocked
from dulwich.objects import ObjectID
from dulwich.refs import Ref
from dulwich.repo import Repo

from ..errors import (
    ConflictError,
    InvalidInputError,
    ProviderError,
    XbrainError,
    no_space,
)
from ..redact import redact_url
from .objects import (
    DAMAGE,
    MAIN,
    CommitId,
    config_change,
    disk_full,
    guarded_objects,
    objects_damaged,
    private_file,
    private_umask,
    remote_failure,
)
from .packcheck import PackBound, amount, check_pack
from .repo import Repository
from .scratch import scratch_dir, sweep_dead
from .shared import settle_written
from .tracking import record_remote_head

if TYPE_CHECKING:  # the network module (sockets, deadlines) loads only for the network
    from .network import Budget

__all__ = ["Transport", "local_path", "sweep_dead"]

T = TypeVar("T", bound="Transport")


def local_path(url: str) -> str | None:
    """The directory ``url`` names when dulwich reads it as a repository on this machine
    (a path or ``file://``), else None."""
    from dulwich.client import LocalGitClient, get_transport_and_path

    try:
        client, path = get_transport_and_path(url)
    except Exception:  # dulwich's own refusal comes again, as one line, from the fetch
        return None
    return str(path) if isinstance(client, LocalGitClient) else None


class Wants(Protocol):
    """Picks the object ids to fetch from a remote's refs (dulwich's determine_wants)."""

    def __call__(
        self, refs: Mapping[Ref, ObjectID], depth: int | None = None
    ) -> list[ObjectID]: ...


def _quiet(_data: bytes) -> None:
    """dulwich's progress callback: remote chatter is never shown."""


class Transport(Repository):
    """Remote configuration, fetch, quarantine and push."""

    def remotes(self) -> dict[str, str]:
        """Configured remotes: name → URL."""
        config = self._repo.get_config()
        out = {}
        for section in config.sections():
            if len(section) == 2 and section[0] == b"remote":
                with contextlib.suppress(KeyError):
                    out[section[1].decode()] = config.get(section, b"url").decode()
        return out

    def set_remote(self, name: str, url: str | None) -> None:
        """Add (or with None remove) a remote in the repository config."""
        from dulwich import porcelain

        with config_change():
            if url is None:
                porcelain.remote_remove(self._repo, name)
            else:
                porcelain.remote_add(self._repo, name, url)

    def fetch(self, url: str, bound: PackBound, label: str | None = None) -> CommitId | None:
        """Fetch the remote ``main`` at ``url`` into this repository; its commit, or None.

        Only ``refs/heads/main`` is wanted, whatever the remote's HEAD names, so a bare
        repository made by ``git init --bare`` (HEAD: master) restores too. The objects
        arrive unreferenced (callers fetch into a quarantine or a clone being built, and
        check them first), held to ``bound``. ``label`` names the remote in messages
        (default: the URL, redacted).
        """
        seen: list[ObjectID] = []

        def wants(refs: Mapping[Ref, ObjectID], depth: int | None = None) -> list[ObjectID]:
            sha = refs.get(MAIN)
            if sha is None:
                return []
            seen.append(sha)
            return [] if sha in self._repo.object_store else [sha]

        self.fetch_wanted(url, wants, bound, label)
        return CommitId(seen[0].decode()) if seen else None

    def fetch_wanted(
        self,
        url: str,
        wants: Wants,
        bound: PackBound,
        label: str | None = None,
        depth: int | None = None,
    ) -> None:
        """Fetch into this repository the objects ``wants`` picks from the remote's refs
        (``depth``: only that many commits of history). What the remote sends is held to
        ``bound`` before anything is indexed (InvalidInputError); every other failure is
        one ProviderError naming ``label`` (default: the URL)."""
        from dulwich.client import LocalGitClient

        from .network import Budget, fetch_failure

        what = f"The repository at {redact_url(url)}"
        budget = Budget(what)
        local = False
        try:
            with private_umask(), budget:
                config = self._repo.get_config_stack()
                client, path = budget.client_for(config, url)
                local = isinstance(client, LocalGitClient)
                if local:
                    budget.no_deadline()
                raw = path.encode() if isinstance(path, str) else path

                def counted(
                    refs: Mapping[Ref, ObjectID], depth: int | None = None
                ) -> list[ObjectID]:
                    budget.count_refs(refs)
                    return wants(refs, depth)

                self._fetch_bounded(client, raw, counted, depth, bound, what, budget)
        except XbrainError:
            raise
        except Exception as exc:  # dulwich raises many kinds for unreachable remotes
            # not chained: its text may quote the URL (a token in it, on --traceback)
            where = local_path(url) if local else None
            raise fetch_failure(budget, local, label or url, exc, where) from None

    def _fetch_bounded(
        self,
        client: Any,
        path: bytes,
        wants: Wants,
        depth: int | None,
        bound: PackBound,
        what: str,
        budget: Budget,
    ) -> None:
        """dulwich's ``client.fetch``, with the pack spooled to a file, held to ``bound``
        and checked (through a read-only map of the file) before dulwich indexes it."""
        with tempfile.TemporaryFile(dir=str(self.control_dir)) as spool:
            received = 0

            def take(data: bytes) -> int:
                nonlocal received
                budget.pack_begins()
                received += len(data)
                if received > bound.max_wire:
                    raise InvalidInputError(
                        f"{what} sent more than {amount(bound.max_wire)}, the limit." + bound.advice
                    )
                return spool.write(data)

            walker = self._repo.get_graph_walker()
            result = client.fetch_pack(path, wants, walker, take, progress=_quiet, depth=depth)
            if received:
                spool.flush()
                with mmap.mmap(spool.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
                    check_pack(mapped, bound, what)
                spool.seek(0)
                self._repo.object_store.add_thin_pack(spool.read, None)
                for item in (self.control_dir / "objects" / "pack").iterdir():
                    if item.lstat().st_mode & 0o077:
                        private_file(item)  # dulwich makes packs 0444
        self._repo.update_shallow(result.new_shallow, result.new_unshallow)

    @contextlib.contextmanager
    def quarantine(self: T) -> Iterator[T]:
        """A scratch repository for fetched objects, borrowing this store's (alternates).

        What a remote sends lands there, never in the store, until the caller has
        checked it and calls :meth:`accept_objects` (git's own receive quarantine).
        The scratch directory is removed afterwards; one a killed process left behind
        is removed by the next call.
        """
        with scratch_dir(self.control_dir / "xbrain" / "incoming") as work:
            with private_umask():
                Repo.init_bare(str(work), default_branch=b"main").close()
                info = work / "objects" / "info"
                info.mkdir(parents=True, exist_ok=True)
                own = os.path.abspath(self.control_dir / "objects")
                (info / "alternates").write_text(own + "\n")
            incoming = type(self)(work)
            try:
                head = self.head()
                if head is not None:  # so the remote sends only what the store lacks
                    with private_umask():
                        incoming.seed_main(head)
                yield incoming
            finally:
                incoming.close()

    def seed_main(self, commit: CommitId) -> None:
        """Point ``main`` of a scratch quarantine at ``commit`` (no CAS: no one else sees it)."""
        self._repo.refs[MAIN] = ObjectID(commit.encode())

    def accept_objects(self, incoming: Repository) -> None:
        """Move the objects of a checked quarantine into this store (packs, then loose)."""
        source = incoming.control_dir / "objects"
        target = self.control_dir / "objects"
        with private_umask():
            pack_dir = source / "pack"
            names = sorted(os.listdir(pack_dir)) if pack_dir.is_dir() else []
            (target / "pack").mkdir(exist_ok=True)
            # the index last: a pack without its index is a leftover, never half-visible
            for name in sorted(names, key=lambda n: (n.endswith(".idx"), n)):
                if name.startswith("pack-"):
                    private_file(pack_dir / name)  # dulwich makes packs 0444
                    os.replace(pack_dir / name, target / "pack" / name)
            for fan in sorted(source.iterdir()):
                if len(fan.name) == 2 and fan.is_dir():
                    (target / fan.name).mkdir(exist_ok=True)
                    for obj in fan.iterdir():
                        if not (target / fan.name / obj.name).exists():
                            private_file(obj)
                            os.replace(obj, target / fan.name / obj.name)

    def note_remote_head(self, name: str, commit: CommitId) -> None:
        """Record ``refs/remotes/<name>/main`` (what the remote was last seen holding)."""
        with private_umask():
            record_remote_head(self._repo, name, ObjectID(commit.encode()))

    def push(
        self, location: str, lease: CommitId | None = None, *, retry: str | None = None
    ) -> None:
        """Push main as a compare-and-swap: only if the remote's main is our ancestor
        (or, given ``lease``, is exactly that commit: replacing history a purge removed).

        The check runs inside the push, on the refs the remote reports at that moment,
        so a device that pushed meanwhile is never overwritten. A refused ref is an
        error, never silent. ``retry``: the command that pulls and pushes again (a
        team's ``xbrain team sync NAME``), named by the refusals instead of the remote.
        Into a repository on this machine, what the push wrote there follows that
        repository's ``core.sharedRepository`` (private when it has none).
        """
        url = self.remotes().get(location, location)
        head = self.head()
        if head is None:
            raise ConflictError("Nothing to push: the store has no commits.")
        diverged: list[bool] = []

        def update_refs(refs: dict[Ref, ObjectID]) -> dict[Ref, ObjectID]:
            unchanged = {name: sha for name, sha in refs.items() if name != Ref(b"HEAD")}
            current = refs.get(MAIN)
            if current is not None and lease is not None and current == lease.encode():
                return {**unchanged, MAIN: ObjectID(head.encode())}
            if current is not None and current != head.encode():
                known = ObjectID(current) in self._repo.object_store
                if not known or not self.is_ancestor(CommitId(current.decode()), head):
                    diverged.append(True)
                    return unchanged  # change nothing
            return {**unchanged, MAIN: ObjectID(head.encode())}

        from .network import Budget, Expired

        started = time.time()
        budget = Budget(f"The repository at {redact_url(url)}")
        try:
            with private_umask(), budget:
                config = self._repo.get_config_stack()
                client, path = budget.client_for(config, url)

                def counted(refs: dict[Ref, ObjectID]) -> dict[Ref, ObjectID]:
                    budget.count_refs(refs)
                    return update_refs(refs)

                result = client.send_pack(
                    path.encode() if isinstance(path, str) else path,
                    counted,
                    generate_pack_data=cast(Any, self._pack_data),
                )
        except FileLocked:
            raise ProviderError(
                "The remote refused refs/heads/main: it is locked (another push?); "
                f"retry {retry or redact_url(location)}."
            ) from None
        except XbrainError:
            raise
        except Exception as exc:  # dulwich raises many kinds for unreachable remotes
            if budget.expired or isinstance(exc, Expired):
                raise budget.timed_out("push to", location) from None
            if no_space(exc):
                raise disk_full() from None
            raise remote_failure("push to", location, exc) from None
        finally:
            local = _local_repository(url)
            if local is not None:
                settle_written(local, started)
        if diverged:
            if retry is not None:
                raise ConflictError(
                    f"The remote has commits this store lacks; {retry} merges them and pushes."
                )
            raise ConflictError(
                "The remote has commits this store lacks; run xbrain remote pull first."
            )
        for ref, error in (getattr(result, "ref_status", None) or {}).items():
            if error:
                raise ProviderError(f"The remote refused {ref.decode()}: {error}")
        if local is not None and _point_unborn_head_at_main(local):
            settle_written(local, started, [local / "HEAD"])
        with private_umask():  # remember what the remote now has
            record_remote_head(
                self._repo,
                location,
                ObjectID(head.encode()) if location in self.remotes() else self._repo.refs[MAIN],
            )

    def _pack_data(self, *args: Any, **kwargs: Any) -> tuple[int, Iterator[Any]]:
        """The store's ``generate_pack_data`` for a push: an object missing or damaged in
        the store is the store's corruption (CorruptStoreError), never the remote's."""
        try:
            count, records = self._repo.generate_pack_data(*args, **kwargs)
        except (KeyError, *DAMAGE) as exc:
            raise objects_damaged() from exc
        return count, guarded_objects(records)


def _local_repository(url: str) -> Path | None:
    """The directory of a remote on this machine (a path or file:// URL), else None."""
    if "://" in url and not url.startswith("file://"):
        return None
    path = Path(url.removeprefix("file://"))
    if not path.is_absolute() or not path.is_dir():
        return None
    return path / ".git" if (path / ".git").is_dir() else path


def _point_unborn_head_at_main(repo_dir: Path) -> bool:
    """A fresh ``git init --bare`` names ``master``: point its unborn HEAD at ``main``
    (whether it did)."""
    with contextlib.suppress(Exception), Repo(str(repo_dir)) as remote:
        chain, sha = remote.refs.follow(Ref(b"HEAD"))
        if sha is None and chain and chain[-1] != MAIN:
            with private_umask():
                remote.refs.set_symbolic_ref(Ref(b"HEAD"), MAIN)
            return True
    return False
