"""The high-level API: one ``Store`` per directory, every write one locked transaction.

A write takes the cross-process store lock, reads the head commit, stages changes in a
``Transaction``, and commits them in one compare-and-swap. Reads take no lock: they read
whatever commit ``main`` points at, which is always complete. A missing store reads as
empty; the first write creates it.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import journal, layout
from .codec import digest
from .design import carry_design, normalize_design
from .errors import (
    BusyError,
    ConflictError,
    CorruptStoreError,
    InvalidInputError,
    NotFoundError,
    StaleError,
    UsageError,
    XbrainError,
)
from .git import CommitId, GitStore, private_umask, read_worktree_file
from .messages import commit_message, validate_agent
from .model import ID_PATTERN, Resource, normalize_resource
from .timestamps import later_of, now_timestamp

if TYPE_CHECKING:
    from .providers import Provider

from .view import DEFAULT_IDENTITY, StoreConfig, Transaction, View, marker_bytes

__all__ = ["Store"]

MAX_BATCH = 1000
NOTE = (
    "Local data remains usable. Receipts record past acknowledgements, "
    "not a live remote health check."
)
LOCK_NAME = "xbrain.lock"


class Store:
    """An xbrain store at ``path`` (a git repository with a working tree)."""

    def __init__(
        self,
        path: Path,
        *,
        wait: float = 0.0,
        agent: str | None = None,
        clock: Callable[[], str] = now_timestamp,
        cache_dir: Path | None = None,
    ) -> None:
        self.path = Path(path).absolute()
        # the compiled Chinese dictionary; the CLI passes the user cache dir
        self.cache_dir = cache_dir or self.path / ".git" / "xbrain" / "cache"
        self.wait = wait
        self.agent = validate_agent(agent)
        self.clock = clock

    # -- plumbing --------------------------------------------------------------------------

    def exists(self) -> bool:
        """True when the directory holds a git repository."""
        return (self.path / ".git").is_dir()

    def _check_dir(self) -> None:
        if self.path.exists() and not self.path.is_dir():
            raise CorruptStoreError(f"Store path is not a directory: {self.path}")
        if self.path.is_dir() and not self.exists() and any(self.path.iterdir()):
            raise CorruptStoreError(
                f"Not an xbrain store (a non-empty directory without .git): {self.path}"
            )

    @contextlib.contextmanager
    def _reading(self) -> Iterator[View | None]:
        """A view of the head commit, or None when the store does not exist yet."""
        self._check_dir()
        if not self.exists():
            yield None
            return
        with GitStore(self.path) as git:
            view = View(git.snapshot())
            if view.snap.commit is None:
                raise CorruptStoreError(f"Store has no commits: {self.path}")
            view.config()
            yield view

    def _create(self) -> None:
        self._check_dir()
        if self.exists():
            return
        message = commit_message("init", [], self.agent, subject="init: create xbrain store")
        GitStore.create(
            self.path,
            {layout.MARKER: marker_bytes()},
            message,
            DEFAULT_IDENTITY,
            int(time.time()),
        )

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        from filelock import FileLock, Timeout

        lock = FileLock(str(self.path / ".git" / LOCK_NAME), timeout=self.wait, mode=0o600)
        try:
            lock.acquire(timeout=self.wait, poll_interval=0.05)
        except Timeout:
            raise BusyError(
                "Memory store is busy; retry after the other command finishes."
            ) from None
        try:
            yield
        finally:
            lock.release()

    @contextlib.contextmanager
    def _transaction(self, command: str) -> Iterator[Transaction]:
        """Lock, stage, commit (if anything changed) and refresh the working tree."""
        with self._session() as git:
            txn = self._begin(git, command)
            yield txn
            self._commit(git, txn)

    @contextlib.contextmanager
    def _session(self) -> Iterator[GitStore]:
        """The store, created if missing, locked, with any interrupted write finished."""
        self._create()
        with self._locked(), GitStore(self.path) as git:
            for leftover in [*git.crashed_write_locks(), *git.pack_leftovers()]:
                leftover.unlink(missing_ok=True)
            pending = git.pending_worktree_paths()
            if pending:
                self._repair_worktree(git, pending)
            yield git

    @staticmethod
    def _begin(git: GitStore, command: str) -> Transaction:
        snap = git.snapshot()
        return Transaction(snap, View(snap).config(), command)

    def _commit(self, git: GitStore, txn: Transaction) -> None:
        """Commit what ``txn`` staged (nothing staged: no commit)."""
        changes = txn.finish()
        if not changes:
            return
        message = commit_message(txn.command, txn.actions, self.agent, txn.subject)
        parent = txn.snap.commit
        git.check_worktree_paths(list(changes))  # a planted link fails before the commit
        commit = git.commit(parent, changes, message, txn.settings.identity, int(time.time()))
        git.refresh_worktree(commit, list(changes))
        txn.commit_id = str(commit)
        if any(path.startswith(layout.RESOURCES_DIR + "/") for path in changes):
            self._reindex_changes(git, parent, commit, changes)
        with contextlib.suppress(OSError), private_umask():
            journal.note(git.control_dir, commit, list(changes))

    def _reindex_changes(
        self, git: GitStore, parent: str | None, commit: str, changes: dict[str, bytes | None]
    ) -> None:
        if not (git.control_dir / "xbrain" / "search.sqlite").exists():
            return  # no index yet: the first search builds it
        from .search.service import after_commit
        from .search.tokenize import Tokenizer

        tokenizer = Tokenizer(self.cache_dir)
        try:
            with private_umask():
                after_commit(git, tokenizer, parent, commit, changes)
        finally:
            tokenizer.close()

    @staticmethod
    def _repair_worktree(git: GitStore, paths: list[str]) -> None:
        if paths == ["*"]:
            head = git.head()
            paths = sorted({p for p, _ in git.snapshot(head).files()} | set(git.index_paths()))
        git.refresh_worktree(git.head(), paths)

    # -- commands --------------------------------------------------------------------------

    def init(self) -> dict[str, Any]:
        """Create the store if missing."""
        existed = self.exists()
        self._create()
        with GitStore(self.path) as git:
            head = git.head()
        return {"store": str(self.path), "created": not existed, "commit": head}

    def get(self, rid: str) -> Resource:
        """The current resource (private content); a deleted one says how to restore it."""
        with self._reading() as view:
            resource = None if view is None or not _is_id(rid) else view.resource(rid)
            tombstone = (
                view.tombstone(rid)
                if view is not None and resource is None and _is_id(rid)
                else None
            )
        if resource is None and tombstone is not None:
            raise NotFoundError(self._deleted_message(rid, tombstone["deletedAt"]))
        if resource is None:
            raise NotFoundError("Resource not found.")
        return resource

    def _deleted_message(self, rid: str, deleted_at: str) -> str:
        with GitStore(self.path) as git:
            commit = git.last_change(layout.record_path("tombstone", rid))
        where = f" (commit {commit[:12]})" if commit else ""
        back = f"{commit[:12]}~1" if commit else "REV"
        return (
            f"Resource was deleted at {deleted_at}{where}; "
            f"bring it back with xbrain restore {rid} --at {back}."
        )

    def inspect(self, rid: str) -> dict[str, Any]:
        """The resource and its revision digest (the guard for ``analyze``)."""
        resource = self.get(rid)
        return {"resource": resource, "resourceRevision": digest(resource)}

    def put(self, items: Any) -> dict[str, Any]:
        """Validate then upsert 1–1,000 resources as one commit."""
        batch = items if isinstance(items, list) else [items]
        if not 1 <= len(batch) <= MAX_BATCH:
            raise InvalidInputError("Supply 1–1,000 resources per batch.")
        normalized = [normalize_resource(item) for item in batch]
        ids = [n.resource["id"] for n in normalized]
        if len(set(ids)) != len(ids):
            raise InvalidInputError("Duplicate source IDs in batch.")
        dropped = sorted({name for n in normalized for name in n.dropped})
        written: list[dict[str, Any]] = []
        with self._transaction("put") as txn:
            result = apply_resources(txn, [n.resource for n in normalized], written)
            for entry, item in zip(written, normalized, strict=True):
                same = txn.same_url(entry["id"], item.resource["source"]["url"])
                if same and entry["status"] != "unchanged":
                    entry["sameUrlAs"] = same  # the same page saved under other ids
        result["results"] = written
        result["droppedFields"] = sum(len(n.dropped) for n in normalized)
        if dropped:
            result["droppedFieldNames"] = dropped
        result["commit"] = txn.commit_id
        return result

    def delete(self, rid: str) -> dict[str, Any]:
        """Replace a live resource with a tombstone; absent ids change nothing."""
        if not _is_id(rid):
            raise InvalidInputError("Invalid resource ID; expected resource_ and 64 hex digits.")
        if not self.exists():
            return {"deleted": False, "remoteSync": "not_attempted", "commit": None}
        with self._transaction("delete") as txn:
            old = txn.resource(rid)
            if old is not None:
                txn.put_tombstone(
                    {"id": rid, "deletedAt": later_of(self.clock(), old["updatedAt"])}
                )
                pending = txn.read_json(layout.PENDING, {})
                if rid in pending:
                    del pending[rid]
                    txn.write_json(layout.PENDING, pending)
                txn.actions = [("delete", rid, old["title"])]
        if old is None:
            return {"deleted": False, "remoteSync": "not_attempted", "commit": None}
        commit = txn.commit_id
        return {"deleted": True, "remoteSync": "pending_explicit_sync", "commit": commit}

    def analyze(self, envelope: Any) -> dict[str, Any]:
        """Attach a design analysis, guarded by the revision read with ``inspect``."""
        if (
            not isinstance(envelope, dict)
            or not isinstance(envelope.get("id"), str)
            or not isinstance(envelope.get("resourceRevision"), str)
        ):
            raise InvalidInputError(
                "Analysis requires id and resourceRevision from the current resource."
            )
        design = normalize_design(envelope.get("design"))
        rid = envelope["id"]
        if not self.exists():
            raise NotFoundError("Resource not found.")
        with self._transaction("analyze") as txn:
            current = txn.resource(rid) if _is_id(rid) else None
            if current is None:
                raise NotFoundError("Resource not found.")
            if digest(current) != envelope["resourceRevision"]:
                raise StaleError("Stale analysis; re-read the resource and inspect its images.")
            updated = {**current, "design": design}
            updated["updatedAt"] = later_of(self.clock(), current["updatedAt"])
            result = apply_resources(txn, [updated])
        result["analysis"] = design["status"]
        result["commit"] = txn.commit_id
        return result

    def import_store(self, file: Path) -> dict[str, Any]:
        """Fill an empty store from an original single-file JSON store."""
        from . import transfer

        with self._reading() as view:  # a store may have raised its limits
            config = view.config() if view is not None else StoreConfig()
        data = transfer.load(Path(file), config)
        with self._transaction("import-store") as txn:
            counts = transfer.fill(txn, data)
        return {"imported": str(Path(file).absolute()), **counts, "commit": txn.commit_id}

    def export_store(self, file: Path, *, force: bool = False) -> dict[str, Any]:
        """Write the whole store as an original single-file JSON store."""
        from . import transfer

        with self._reading() as view:
            return transfer.export(view, Path(file), self.path, force)

    def doctor(self, *, repair: bool = False) -> dict[str, Any]:
        """Check (and with ``repair``, fix) the store; see :mod:`xbrain.doctor`."""
        from . import doctor

        self._check_dir()
        if not self.exists():
            raise NotFoundError(f"No store at {self.path}; the first write creates it.")
        if not repair:
            with GitStore(self.path) as git:
                return doctor.diagnose(git, repair=False)
        with self._locked(), GitStore(self.path) as git:
            return doctor.diagnose(git, repair=True)

    def receive(self, resource: Resource) -> dict[str, Any]:
        """Accept a resource as a file-provider target: refuse a newer/conflicting copy.

        Unlike ``put``, a tombstone here does not block it (the original provider rule).
        """
        from .providers.file import NEWER

        resource = normalize_resource(resource).resource
        with self._transaction("receive") as txn:
            old = txn.resource(resource["id"])
            if old is not None and digest(old) == digest(resource):
                return {"changed": False, "commit": None}
            if old is not None and (old["updatedAt"] >= resource["updatedAt"]):
                raise ConflictError(NEWER)
            txn.put_resource(resource)
            txn.actions.append(
                ("add" if old is None else "update", resource["id"], resource["title"])
            )
        return {"changed": True, "commit": txn.commit_id}

    def forget(self, rid: str) -> dict[str, Any]:
        """Remove a resource as a file-provider target: no tombstone, queue entry dropped."""
        if not _is_id(rid):
            raise InvalidInputError("Invalid resource ID; expected resource_ and 64 hex digits.")
        with self._transaction("forget") as txn:
            old = txn.resource(rid)
            if old is not None:
                txn.remove_resource(rid)
                txn.actions.append(("remove", rid, old["title"]))
            pending = txn.read_json(layout.PENDING, {})
            if rid in pending:
                del pending[rid]
                txn.write_json(layout.PENDING, pending)
        return {"changed": old is not None, "commit": txn.commit_id}

    # -- history ---------------------------------------------------------------------------

    def log(self, rid: str | None = None, limit: int = 20) -> dict[str, Any]:
        """Commits (newest first) of the store, or those that changed one resource."""
        from .history import log

        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 1000:
            raise InvalidInputError("limit must be 1–1,000.")
        if rid is not None and not _is_id(rid):
            raise InvalidInputError("Invalid resource ID; expected resource_ and 64 hex digits.")
        with self._reading() as view:
            if view is None:
                return {"id": rid, "commits": []}
            with GitStore(self.path) as git, private_umask():
                return {"id": rid, "commits": log(git, rid, limit)}

    def show(self, rid: str, at: str) -> dict[str, Any]:
        """A resource (or its tombstone) as of revision ``at``."""
        with self._reading() as view:
            if view is None:
                raise NotFoundError(f"Unknown revision: {at}")
            with GitStore(self.path) as git:
                past = View(git.snapshot(git.resolve(at)))
                resource = past.resource(rid) if _is_id(rid) else None
                tombstone = past.tombstone(rid) if _is_id(rid) and resource is None else None
                commit = past.snap.commit
        if resource is None and tombstone is None:
            raise NotFoundError(f"Resource not found at {at}.")
        state = {"resource": resource} if resource is not None else {"tombstone": tombstone}
        return {"id": rid, "commit": commit, "state": "live" if resource else "deleted", **state}

    def diff(self, rid: str, old: str | None = None, new: str | None = None) -> dict[str, Any]:
        """How a resource changed between two revisions (default: its last change)."""
        from .history import diff, log

        if not _is_id(rid):
            raise InvalidInputError("Invalid resource ID; expected resource_ and 64 hex digits.")
        with self._reading() as view:
            if view is None:
                raise NotFoundError("Resource not found.")
            with GitStore(self.path) as git, private_umask():
                to: CommitId | None = git.resolve(new) if new is not None else git.head()
                since: CommitId | None
                if old is not None:
                    since = git.resolve(old)
                else:
                    changes = log(git, rid, 1) if new is None else []
                    if new is not None or not changes:
                        raise UsageError("Give the revision to compare with (xbrain diff ID REV).")
                    to = changes[0]["commit"]
                    since = _changed_side(git, rid, to, changes[0]["parents"])
                return diff(View(git.snapshot(since)), View(git.snapshot(to)), rid)

    def restore(self, rid: str, at: str) -> dict[str, Any]:
        """Write a resource's content as of ``at`` as a new revision (history untouched)."""
        past = self.show(rid, at)
        if past["state"] != "live":
            raise ConflictError(f"The resource was deleted at {at}; nothing to restore.")
        with self._transaction("restore") as txn:
            current = txn.resource(rid)
            deleted = txn.tombstone(rid)
            after = max(
                (
                    r
                    for r in (current and current["updatedAt"], deleted and deleted["deletedAt"])
                    if r
                ),
                default=past["resource"]["updatedAt"],
            )
            restored = {**past["resource"], "updatedAt": later_of(self.clock(), after)}
            if current is not None and {**current, "updatedAt": ""} == {
                **restored,
                "updatedAt": "",
            }:
                return {"restored": False, "id": rid, "from": past["commit"], "commit": None}
            txn.put_resource(restored)
            txn.actions.append(("restore", rid, restored["title"]))
            txn.subject = f"restore: {rid} from {str(past['commit'])[:12]}"
        return {"restored": True, "id": rid, "from": past["commit"], "commit": txn.commit_id}

    def adopt(self) -> dict[str, Any]:
        """Validate and commit hand edits of record files in the working tree.

        Valid edited or new ``resources/``/``tombstones/`` files are committed in their
        canonical form (one commit); invalid ones, deletions and other files are reported
        and left alone.
        """
        from .intake import MAX_BYTES
        from .model import parse_record

        self._existing()
        adopted: list[dict[str, str]] = []
        rejected: list[dict[str, str]] = []
        with self._transaction("adopt") as txn:
            committed = dict(txn.snap.files())
            git_root = self.path
            candidates = sorted(
                {p for p in _worktree_files(git_root)}
                | {p for p in committed if p.startswith(("resources/", "tombstones/"))}
            )
            for path in candidates:
                # links are never followed; nothing larger than a record is read
                data = read_worktree_file(git_root / path, MAX_BYTES["resource"])
                if data is None and os.path.lexists(git_root / path):
                    rejected.append(
                        {"path": path, "error": "Not a regular file, or too large; left alone."}
                    )
                    continue
                if data is not None and GitStore.hash_blob(data) == committed.get(path):
                    continue
                kind = (
                    "resource"
                    if path.startswith("resources/")
                    else "tombstone"
                    if path.startswith("tombstones/")
                    else None
                )
                if kind is None:
                    rejected.append({"path": path, "error": "Not a record file; left alone."})
                    continue
                if data is None:
                    rejected.append(
                        {"path": path, "error": "Deleted by hand; use xbrain delete instead."}
                    )
                    continue
                try:
                    record = parse_record(kind, data)
                    if layout.record_path(kind, record["id"]) != path:
                        raise InvalidInputError("File name or folder does not match its id.")
                    if kind == "resource" and txn.tombstone(record["id"]) is not None:
                        raise InvalidInputError(
                            "The resource is deleted; restore it with xbrain put."
                        )
                except XbrainError as exc:
                    rejected.append({"path": path, "error": exc.message})
                    continue
                if kind == "resource":
                    txn.put_resource(record)
                else:
                    txn.put_tombstone(record)
                txn.actions.append(("adopt", record["id"], record.get("title")))
                adopted.append({"path": path, "id": record["id"]})
        return {"adopted": adopted, "rejected": rejected, "commit": txn.commit_id}

    # -- remotes ---------------------------------------------------------------------------

    def _existing(self) -> None:
        self._check_dir()
        if not self.exists():
            raise NotFoundError(f"No store at {self.path}; the first write creates it.")

    def remote_add(self, name: str, url: str) -> dict[str, Any]:
        """Remember a git remote (a path or URL you chose) for backups or other devices."""
        from .remote import describe, validate_name, validate_remote_url

        validate_name(name)
        validate_remote_url(url)
        with self._session() as git:
            if name in git.remotes():
                raise ConflictError(f"A remote named {name} exists; remove it first.")
            git.set_remote(name, url)
            return {"remotes": describe(git)}

    def remote_remove(self, name: str) -> dict[str, Any]:
        """Forget a remote (nothing on the remote changes)."""
        from .remote import describe

        self._existing()
        with self._session() as git:
            if name not in git.remotes():
                raise NotFoundError(f"No remote named {name}.")
            git.set_remote(name, None)
            return {"remotes": describe(git)}

    def remote_list(self) -> dict[str, Any]:
        """The configured remotes."""
        from .remote import describe

        if not self.exists():
            self._check_dir()
            return {"remotes": []}
        with GitStore(self.path) as git:
            return {"remotes": describe(git)}

    def remote_push(self, name: str = "origin") -> dict[str, Any]:
        """Push main to a remote (a backup); refused if the remote has diverged."""
        self._existing()
        with GitStore(self.path) as git:
            url = git.remotes().get(name)
            if url is None:
                raise NotFoundError(f"No remote named {name}; add it with xbrain remote add.")
            local = Path(url.removeprefix("file://"))
            is_path = "://" not in url or url.startswith("file://")
            if is_path and local.is_absolute() and not local.exists():
                GitStore.init_bare(local)  # a backup on a local disk: start it
            git.push(name)
            return {"pushed": name, "commit": git.head()}

    def remote_pull(self, name: str = "origin") -> dict[str, Any]:
        """Fetch a remote and fast-forward or merge deterministically."""
        from .remote import pull

        self._existing()
        return {"remote": name, **pull(self, name)}

    def remote_verify(self, name: str = "origin") -> dict[str, Any]:
        """Prove the remote restores: clone it aside, check objects, records and catalog."""
        from .remote import verify

        self._existing()
        return verify(self, name)

    def read_view(self, read: Callable[[View], Any]) -> Any:
        """Run ``read`` on a view of the head commit (None when there is no store)."""
        with self._reading() as view:
            return None if view is None else read(view)

    def capture(
        self,
        bookmarks_file: Path,
        *,
        skip_invalid: bool = False,
        progress: Callable[[int, int], None] | None = None,
    ) -> dict[str, Any]:
        """Capture a gallery bookmark library (read-only) as one commit."""
        from .ingest.bookmarks import read_library
        from .ingest.capture import capture, check_rows

        bookmarks = read_library(Path(bookmarks_file))
        if not self.exists() and not skip_invalid:
            self._check_dir()
            check_rows(bookmarks, self.clock())  # a failing first capture creates nothing
        with self._transaction("capture") as txn:
            result = capture(
                txn,
                bookmarks,
                self.clock(),
                apply_resources,
                skip_invalid=skip_invalid,
                progress=progress,
            )
        return {**result, "commit": txn.commit_id}

    def pull(
        self,
        source_config: Path,
        *,
        max_pages: int = 10,
        restart: bool = False,
        progress: Callable[[int, int], None] | None = None,
    ) -> dict[str, Any]:
        """Pull pages from a source adapter; one commit per committed page."""
        from .ingest.pull import pull
        from .ingest.source import load_source_config

        source = load_source_config(Path(source_config))
        return pull(self, source, max_pages, restart, self.clock, progress)

    def list(
        self, *, limit: int = 20, since: str | None = None, provider: str | None = None
    ) -> dict[str, Any]:
        """Live resources, newest ``updatedAt`` first, as brief records (private content)."""
        from .listing import list_resources

        with self._reading() as view:
            return list_resources(view, limit=limit, since=since, provider=provider)

    def pending(self, limit: int = 20) -> dict[str, Any]:
        """Queued resources waiting for distillation (private content)."""
        from .ingest.queue import pending

        with self._reading() as view:
            return pending(view, limit)

    def distill(self, entries: Any) -> dict[str, Any]:
        """Apply agent distillations to queued resources (all or nothing)."""
        from .ingest.queue import STALE, distill

        if not self.exists():
            self._check_dir()
            raise StaleError(STALE)  # nothing is queued in a store that does not exist
        with self._transaction("distill") as txn:
            result = distill(txn, entries, self.clock())
        return {**result, "commit": txn.commit_id}

    def config(self, key: str | None = None, value: str | None = None) -> dict[str, Any]:
        """Show the store's settings, or set one (committed in ``xbrain.yaml``)."""
        from .view import set_config_value

        if key is None:
            with self._reading() as view:
                settings = view.config() if view is not None else StoreConfig()
            return {"identity": settings.identity, "limits": settings.limits(), "commit": None}
        if value is None:
            raise UsageError("Give a VALUE to set.")
        with self._session() as git:
            txn = self._begin(git, "config")
            marker = set_config_value(txn.read(layout.MARKER), key, value)
            txn.write(layout.MARKER, marker)
            txn.subject = f"config: set {key}"
            settings = StoreConfig.from_marker(marker)
            self._commit(git, txn)
            if key.startswith("limits."):  # what a pull is held to on this device
                git.set_device_limit(key.split(".", 1)[1], int(value))
        return {"identity": settings.identity, "limits": settings.limits(), "commit": txn.commit_id}

    def search(
        self,
        query: str,
        *,
        limit: int = 5,
        domain: str | None = None,
        feature: str | None = None,
        style: str | None = None,
        at: str | None = None,
        provider: Provider | None = None,
    ) -> dict[str, Any]:
        """Ranked lexical candidates (private content), optionally as of revision ``at``.

        With a ``provider``, its candidates are merged: local wins, local tombstones hide
        remote copies, and the merged set is ranked together. A provider failure fails
        the search.
        """
        from .search import query as fast
        from .search import service
        from .search.tokenize import Tokenizer

        query = fast.validate_request(query, limit, domain, feature, style)
        filtered = bool(domain or feature or style)
        remote = provider.search(query, limit) if provider is not None else None
        tokenizer = Tokenizer(self.cache_dir)
        try:
            terms = tokenizer.query_terms(query)
            if not terms and not filtered:
                return {**fast.answer([], terms), "provider": provider and provider.kind}
            if not self.exists():
                self._check_dir()
                if at is not None:
                    raise NotFoundError(f"Unknown revision: {at}")
                from .search.index import SearchIndex

                with SearchIndex(":memory:", tokenizer) as memory:  # remote candidates only
                    memory.rebuild(iter(remote or []), "remote")
                    hits = memory.search(terms, limit, domain, feature, style)
                return {**fast.answer(hits, terms), "provider": provider and provider.kind}
            # (no fast path here: it only saves imports, which a library caller has paid)
            with GitStore(self.path) as git, private_umask():  # the index stays private
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
                )
                return {**found, "provider": provider and provider.kind}
        finally:
            tokenizer.close()

    def reindex(self) -> dict[str, Any]:
        """Rebuild the search index from the committed resources."""
        from .search import service
        from .search.tokenize import Tokenizer

        self._check_dir()
        if not self.exists():
            raise NotFoundError(f"No store at {self.path}; the first write creates it.")
        tokenizer = Tokenizer(self.cache_dir)
        started = time.perf_counter()
        try:
            with self._locked(), GitStore(self.path) as git, private_umask():
                view = View(git.snapshot())
                count = service.reindex(git, view, tokenizer)
                commit = view.snap.commit
        finally:
            tokenizer.close()
        return {
            "reindexed": count,
            "commit": commit,
            "milliseconds": round((time.perf_counter() - started) * 1000),
        }

    def provider(self, config_file: Path) -> Provider:
        """The provider a config file selects for this store (validated, not contacted)."""
        from .providers import load_provider

        provider: Provider = load_provider(Path(config_file), self.path, self.cache_dir)
        return provider

    def sync(
        self, provider: Provider | None, rid: str | None = None, everything: bool = False
    ) -> dict[str, Any]:
        """Send resources and deletions to ``provider`` (one id, or ``everything``)."""
        from .providers.sync import sync

        if provider is None:
            raise UsageError(
                "Memory provider not configured; resources remain local and unsynced. "
                "Select a personal provider explicitly."
            )
        if (rid is None) == (not everything):
            raise UsageError("Select exactly one of --id RESOURCE_ID or --all.")
        if not self.exists():
            self._check_dir()
            if rid is not None:
                raise NotFoundError("Resource not found.")
        return sync(self, provider, rid)

    def status(self, provider: Provider | None = None) -> dict[str, Any]:
        """Counts and sync state (no provider: ``not_configured``)."""
        with self._reading() as view:
            summary = {"resources": 0, "tombstones": 0}
            pending: dict[str, Any] = {}
            resumable = 0
            head = None
            if view is not None:
                summary = view.summary()
                pending = view.read_json(layout.PENDING, {})
                for name in view.snap.listdir(layout.SOURCES_DIR):
                    progress = view.read_json(f"{layout.SOURCES_DIR}/{name}", {})
                    resumable += progress.get("active") is True
                head = view.snap.commit
            remote = None
            if provider is not None:
                from .providers.sync import provider_status

                remote = provider_status(view, provider)
        result = {
            "store": str(self.path),
            "exists": self.exists(),
            "resources": summary["resources"],
            "tombstones": summary["tombstones"],
            "pendingDistillation": len(pending),
            "resumableSources": resumable,
            "provider": None,
            "pending": summary["resources"] + summary["tombstones"],
            "remoteSync": "not_configured",
            "note": NOTE,
        }
        return {**result, **(remote or {}), "commit": head}


def clone(url: str, directory: Path) -> dict[str, Any]:
    """Restore a store from a remote into a new directory (with ``origin`` set)."""
    from .remote import clone_into

    target = Path(directory).absolute()
    clone_into(url, target)
    store = Store(target)
    return {"store": str(target), "status": store.status()}


def _changed_side(git: GitStore, rid: str, commit: CommitId, parents: list[str]) -> CommitId | None:
    """The parent to compare ``commit`` with for ``rid``: the first one that differs.

    For a merge that kept this device's revision, that is the other device's side, so
    ``diff`` shows what the merge did to the resource rather than nothing.
    """
    path_of = {kind: layout.record_path(kind, rid) for kind in ("resource", "tombstone")}
    now = git.snapshot(commit)
    state = tuple(now.blob_id(path) for path in path_of.values())
    for parent in parents:
        snap = git.snapshot(CommitId(parent))
        if tuple(snap.blob_id(path) for path in path_of.values()) != state:
            return CommitId(parent)
    return CommitId(parents[0]) if parents else None


def _worktree_files(root: Path) -> list[str]:
    with GitStore(root) as git:
        return [p for p in git.worktree_files() if not Path(p).name.endswith(".xbrain-tmp")]


def _is_id(rid: str) -> bool:
    return isinstance(rid, str) and ID_PATTERN.fullmatch(rid) is not None


def apply_resources(
    txn: Transaction, resources: list[Resource], results: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """The original's upsert (reference §3.1): carry design, check staleness, count.

    ``results``, when given, receives ``{id, status}`` per resource in input order.
    """
    counts = {"added": 0, "updated": 0, "unchanged": 0}
    for incoming in resources:
        rid = incoming["id"]
        old = txn.resource(rid)
        new = carry_design(old, incoming)
        deleted = txn.tombstone(rid) if old is None else None
        if (old is not None and new["updatedAt"] < old["updatedAt"]) or (
            deleted is not None and new["updatedAt"] <= deleted["deletedAt"]
        ):
            raise StaleError(
                "Stale resource; use a newer updatedAt to update or explicitly restore it "
                f"(xbrain restore {rid} --at REV)."
            )
        if old is not None and digest(old) == digest(new):
            counts["unchanged"] += 1
            if results is not None:
                results.append({"id": rid, "status": "unchanged"})
            continue
        if old is not None and new["updatedAt"] == old["updatedAt"]:
            raise ConflictError("Conflicting resource revision; use a newer updatedAt.")
        verb = "update" if old is not None else ("restore" if deleted else "add")
        status = "updated" if old is not None else "added"
        counts[status] += 1
        if results is not None:
            results.append({"id": rid, "status": status})
        txn.put_resource(new)
        txn.actions.append((verb, rid, new["title"]))
    return {**counts, "total": txn.totals()["resources"], "remoteSync": "not_attempted"}
