"""The convenience API on top of the features: one ``Store`` per directory.

Each method is one call into the feature that owns it (resources, history, search,
remotes, providers and sync, ingestion, transfer, doctor); this module only wires them
together: it gives search's index upkeep to the core's commit hooks, hands doctor the
search index check, indexes what ``import-store`` and ``clone`` have just read, and gives
the file provider a way to open another store and rank. Library
callers and the MCP server use it; the CLI uses it too, except for the search fast path.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import (
    kinds,  # noqa: F401  (registers the record kinds)
    resources,
)
from ..core import Core
from ..secretscan import validate_allowed
from ..timestamps import now_timestamp
from .entries import Entries
from .remotes import Remotes
from .resourcefacts import ResourceFacts
from .skills import Skills

if TYPE_CHECKING:
    from ..kinds.model import Resource
    from ..providers import Provider

__all__ = ["Store", "clone"]


class Store(Skills, Entries, ResourceFacts, Remotes):
    """An xbrain store at ``path`` (a git repository with a working tree)."""

    def __init__(
        self,
        path: Path,
        *,
        wait: float = 0.0,
        agent: str | None = None,
        clock: Callable[[], str] = now_timestamp,
        cache_dir: Path | None = None,
        allow_secrets: Iterable[str] = (),
    ) -> None:
        from ..search.resourcestanding import keep_current
        from ..search.upkeep import upkeep

        self.core = Core(
            path,
            wait=wait,
            agent=agent,
            clock=clock,
            cache_dir=cache_dir,
            allow_secrets=validate_allowed(allow_secrets),
        )
        self.path = self.core.path
        self.cache_dir = self.core.cache_dir
        self.agent = self.core.agent
        upkeep(self.core)
        keep_current(self.core)  # which resources stand (search/recall leave the rest out)

    def exists(self) -> bool:
        """True when the directory holds a git repository."""
        return self.core.exists()

    # -- resources -------------------------------------------------------------------------

    def init(self) -> dict[str, Any]:
        """Create the store if missing."""
        from ..configure import init

        return init(self.core)

    def config(self, key: str | None = None, value: str | None = None) -> dict[str, Any]:
        """Show the store's settings, or set one (committed in ``xbrain.yaml``)."""
        from ..configure import config

        if key == "telemetry":  # a switch of this device, never committed
            if value not in ("on", "off"):
                from ..errors import UsageError

                raise UsageError("xbrain config telemetry on|off")
            self.set_telemetry(value == "on")
            return {**config(self.core), "telemetry": value}
        if key == "projects" and value is None:  # this device's registry, never committed
            from ..recall.projects import listed

            self.core.existing()
            found = listed(self.path / ".git")
            return {"count": len(found), "projects": found}
        return config(self.core, key, value)

    def get(self, rid: str) -> Resource:
        """The current resource (private content); a deleted one says how to restore it."""
        return resources.get(self.core, rid)

    def inspect(self, rid: str) -> dict[str, Any]:
        """The resource and its revision digest (the guard for ``analyze``)."""
        return resources.inspect(self.core, rid)

    def put(
        self,
        items: Any,
        facts: dict[str, Any] | None = None,
        propose: dict[str, str] | None = None,
    ) -> dict[str, Any]:
        """Validate then upsert 1–1,000 resources as one commit (``facts``: supersedes,
        validFrom, validUntil for each; ``propose``: a proposal's proposedBy)."""
        return self.put_facts(items, facts, propose)

    def delete(self, rid: str) -> dict[str, Any]:
        """Replace a live resource with a tombstone; absent ids change nothing."""
        return resources.delete(self.core, rid)

    def analyze(self, envelope: Any) -> dict[str, Any]:
        """Attach a design analysis, guarded by the revision read with ``inspect``."""
        return resources.analyze(self.core, envelope)

    def receive(self, resource: Resource) -> dict[str, Any]:
        """Accept a resource as a file-provider target (a newer copy there is refused)."""
        return resources.receive(self.core, resource)

    def forget(self, rid: str) -> dict[str, Any]:
        """Remove a resource as a file-provider target (no tombstone)."""
        return resources.forget(self.core, rid)

    def adopt(self) -> dict[str, Any]:
        """Validate and commit hand edits of record files in the working tree."""
        from ..adopt import adopt

        return adopt(self.core)

    def list(
        self,
        *,
        limit: int = 20,
        since: str | None = None,
        provider: str | None = None,
        offset: int = 0,
    ) -> dict[str, Any]:
        """Live resources, newest ``updatedAt`` first, as brief records (private content);
        ``offset`` skips that many (a page after the first). From the search index when
        it reflects ``main`` (a warm MCP server: ≈ 100 ms → ≈ 20 ms, with a provider
        ≈ 2.5 s → ≈ 25 ms on 10,000), else from the catalog and the records in git."""
        from functools import partial

        from ..listing import from_index, list_resources
        from ..search.query import indexed_listing

        page = partial(indexed_listing, self.core.path / ".git")
        listed = from_index(page, limit=limit, since=since, provider=provider, offset=offset)
        if listed is not None:
            return listed
        with self.core.reading() as view:
            return list_resources(view, limit=limit, since=since, provider=provider, offset=offset)

    # -- history ---------------------------------------------------------------------------

    def log(self, rid: str | None = None, limit: int = 20) -> dict[str, Any]:
        """Commits (newest first) of the store, or those that changed one resource."""
        from .. import history

        return history.log(self.core, rid, limit)

    def show(self, rid: str, at: str) -> dict[str, Any]:
        """A resource (or its tombstone) as of revision ``at``."""
        from .. import history

        return history.show(self.core, rid, at)

    def diff(self, rid: str, old: str | None = None, new: str | None = None) -> dict[str, Any]:
        """How a resource changed between two revisions (default: its last change)."""
        from .. import history

        return history.diff(self.core, rid, old, new)

    def restore(self, rid: str, at: str) -> dict[str, Any]:
        """Write a resource's content as of ``at`` as a new revision (history untouched)."""
        from .. import history

        return history.restore(self.core, rid, at)

    # -- search ----------------------------------------------------------------------------

    def search(self, query: str, **options: Any) -> dict[str, Any]:
        """Ranked lexical candidates; see :func:`xbrain.retrieval.operations.search`."""
        from ..retrieval.operations import search

        return search(self.core, query, **options)

    def reindex(
        self,
        progress: Callable[[int, int], None] | None = None,
        *,
        semantic: Any = None,
        semantic_off: bool = False,
    ) -> dict[str, Any]:
        """Rebuild the derived indexes; ``semantic`` (an ``embedding.ProviderSpec``)
        switches semantic recall on here and builds its vectors, ``semantic_off`` off."""
        from ..retrieval.operations import reindex

        return reindex(self.core, progress, semantic=semantic, semantic_off=semantic_off)

    def purge(
        self, ids: builtins.list[str], texts: builtins.list[str], *, apply: bool = False
    ) -> dict[str, Any]:
        """Remove records or strings from all history (dry run unless ``apply``); see
        :mod:`xbrain.purge`. Applied, the derived indexes are rebuilt."""
        from ..purge import purge

        report = purge(self.core, ids, texts, apply=apply)
        if report["applied"]:
            self.reindex()
        return report

    # -- integrity, transfer ---------------------------------------------------------------

    def doctor(self, *, repair: bool = False) -> dict[str, Any]:
        """Check (and with ``repair``, fix) the store; see :mod:`xbrain.doctor`."""
        import functools

        from .. import doctor
        from ..recall import telemetry
        from ..retrieval.operations import check_index, check_vectors

        checks: list[Any] = [
            functools.partial(check_index, cache_dir=self.core.cache_dir),
            telemetry.check,
        ]
        if (self.path / ".git" / "xbrain" / "vectors").is_dir():
            checks.append(check_vectors)  # numpy is needed only when vectors exist
        return doctor.run(self.core, repair=repair, checks=tuple(checks))

    def gc(self) -> dict[str, Any]:
        """Consolidate every pack and loose object into one pack; see :mod:`xbrain.doctor.gc`."""
        from ..doctor.gc import gc

        return gc(self.core)

    def import_store(
        self, file: Path, progress: Callable[[int, int], None] | None = None
    ) -> dict[str, Any]:
        """Fill an empty store from an original single-file JSON store (and index it)."""
        from .. import transfer
        from ..retrieval.operations import build_from

        def index(commit: str, resources: list[Resource]) -> None:
            build_from(self.core, commit, resources, progress)

        return transfer.import_store(self.core, file, index)

    def export_store(self, file: Path, *, force: bool = False) -> dict[str, Any]:
        """Write the whole store as an original single-file JSON store."""
        from .. import transfer

        return transfer.export_store(self.core, file, force=force)

    # -- ingestion -------------------------------------------------------------------------

    def capture(self, bookmarks_file: Path, **options: Any) -> dict[str, Any]:
        """Capture a gallery bookmark library (read-only) as one commit."""
        from .. import ingest

        return ingest.capture_library(self.core, bookmarks_file, **options)

    def pull(self, source_config: Path, **options: Any) -> dict[str, Any]:
        """Pull pages from a source adapter; one commit per committed page."""
        from .. import ingest

        return ingest.pull_source(self.core, source_config, **options)

    def pending(self, limit: int = 20) -> dict[str, Any]:
        """Queued resources waiting for distillation (private content)."""
        from .. import ingest

        return ingest.pending(self.core, limit)

    def distill(self, entries: Any) -> dict[str, Any]:
        """Apply agent distillations to queued resources (all or nothing)."""
        from .. import ingest

        return ingest.distill(self.core, entries)

    # -- providers -------------------------------------------------------------------------

    def provider(self, config_file: Path) -> Provider:
        """The provider a config file selects for this store (validated, not contacted)."""
        from ..providers import load_provider

        provider: Provider = load_provider(Path(config_file), self.path, _Host(self.cache_dir))
        return provider

    def sync(
        self, provider: Provider | None, rid: str | None = None, everything: bool = False
    ) -> dict[str, Any]:
        """Send resources and deletions to ``provider`` (one id, or ``everything``)."""
        from ..providers.sync import sync_selection

        return sync_selection(self.core, provider, rid, everything)

    def status(self, provider: Provider | None = None) -> dict[str, Any]:
        """Counts and sync state (no provider: ``not_configured``)."""
        from ..listing import inventory
        from ..providers.sync import status

        return status(self.core, provider, inventory)


class _Host:
    """What this store lends a provider: another store, and its own lexical ranking."""

    def __init__(self, cache_dir: Path) -> None:
        self.cache_dir = cache_dir

    def open_store(self, path: Path) -> Store:
        return Store(path, cache_dir=self.cache_dir)

    def rank(self, resources: list[Resource], query: str, limit: int) -> list[Resource]:
        from ..retrieval.operations import rank

        return rank(resources, query, limit, self.cache_dir)


def clone(
    url: str,
    directory: Path,
    progress: Callable[[int, int], None] | None = None,
    cache_dir: Path | None = None,
    team: str | None = None,
) -> dict[str, Any]:
    """Restore a store from a remote into a new directory (with ``origin`` set); its
    index is built with the compiled caches in ``cache_dir`` (as ``Store`` takes it).
    ``team``: the team it is the clone of, checked as that team's pulls are."""
    from ..remote import clone_into
    from ..retrieval.operations import build_from

    target = Path(directory).absolute()
    records: list[Resource] = []  # as the check parsed them: the index needs no YAML
    head = clone_into(url, target, resources=records, team=team)
    store = Store(target, cache_dir=cache_dir)
    build_from(store.core, head, records, progress)
    return {"store": str(target), "status": store.status()}
