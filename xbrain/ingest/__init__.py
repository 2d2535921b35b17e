"""Ingestion: capture a gallery bookmark library, pull pages from a source adapter, and
the distillation queue (``pending`` / ``distill``).

State lives in the store next to the records and is committed with them:
``ingestion/sources/<key>.json`` (pull progress), ``ingestion/captures/<aa>.json``
(what each resource was captured from) and ``ingestion/pending.json`` (the queue).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..core import Core
from ..errors import StaleError

__all__ = ["capture_library", "distill", "pending", "pull_source"]


def capture_library(
    core: Core,
    bookmarks_file: Path,
    *,
    skip_invalid: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Capture a gallery bookmark library (read-only) as one commit."""
    from ..resources import apply_resources
    from .bookmarks import read_library
    from .capture import capture as capture_rows
    from .capture import check_rows

    bookmarks = read_library(Path(bookmarks_file))
    if not core.exists() and not skip_invalid:
        core.check_dir()
        check_rows(bookmarks, core.clock())  # a failing first capture creates nothing
    with core.transaction("capture") as txn:
        result = capture_rows(
            txn,
            bookmarks,
            core.clock(),
            apply_resources,
            skip_invalid=skip_invalid,
            progress=progress,
        )
    return {**result, "commit": txn.commit_id}


def pull_source(
    core: Core,
    source_config: Path,
    *,
    max_pages: int = 10,
    restart: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Pull pages from a source adapter; one commit per committed page."""
    from .pull import pull as pull_pages
    from .source import load_source_config

    source = load_source_config(Path(source_config))
    return pull_pages(core, source, max_pages, restart, core.clock, progress)


def pending(core: Core, limit: int = 20) -> dict[str, Any]:
    """Queued resources waiting for distillation (private content)."""
    from .queue import pending as queued

    with core.reading() as view:
        return queued(view, limit)


def distill(core: Core, entries: Any) -> dict[str, Any]:
    """Apply agent distillations to queued resources (all or nothing)."""
    from .queue import STALE
    from .queue import distill as apply_distillations

    if not core.exists():
        core.check_dir()
        raise StaleError(STALE)  # nothing is queued in a store that does not exist
    with core.transaction("distill") as txn:
        result = apply_distillations(txn, entries, core.clock())
    return {**result, "commit": txn.commit_id}
