"""The viewer's search and recall, asked of a running ``xbrain serve`` first.

A server for the store (``xbrain serve``, or one ``autoserve`` started) holds what a
search costs a process the first time — the tokenizer's dictionaries, the indexes, the
embedding model and its vectors when semantic recall is on. The viewer asks it exactly
as the CLI's served path does (``serveclient.ask`` with the command's own arguments), so
its answers are the ones ``xbrain recall`` / ``xbrain search`` print through the
server; when no server answers, the viewer runs the same functions itself
(``lightcli.answer``, ``lightsearch.search_document``), as before. Either way a look in
the viewer records no telemetry. Each answer says which path gave it (``serve`` or
``viewer``), for the search and health pages.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import (
    BusyError,
    ConflictError,
    CorruptStoreError,
    InvalidInputError,
    NotFoundError,
    ProviderError,
    UsageError,
    XbrainError,
)

__all__ = ["SERVE", "VIEWER", "recall", "search", "server_pid"]

SERVE = "serve"
VIEWER = "viewer"
_ERRORS: dict[int, type[XbrainError]] = {
    2: UsageError,
    3: NotFoundError,
    4: InvalidInputError,
    5: ConflictError,
    6: BusyError,
    7: CorruptStoreError,
    8: ProviderError,
}


def _served(code: int, body: bytes) -> dict[str, Any]:
    """A server's answer as the document it printed (its one-line error raised as the
    error of the same exit code)."""
    if code != 0:
        message = body.decode("utf-8", "replace").strip() or f"xbrain serve failed ({code})."
        raise _ERRORS.get(code, XbrainError)(message)
    found: dict[str, Any] = json.loads(body)
    return found


def recall(
    store: Path, query: str, *, only: tuple[str, ...], include_retired: bool, mode: str | None
) -> tuple[dict[str, Any], str]:
    """``xbrain recall`` of ``query`` limited to kinds ``only`` (nothing recorded in
    telemetry), and the path that answered."""
    from ..serveclient import ask

    data = json.dumps({"prompt": query}).encode("utf-8")
    argv = [f"--only={kind}" for kind in only]
    argv += ["--scoring=absolute", "--threshold=0.05", "--top-k=20", "--budget=200000"]
    argv += [f"--mode={mode}"] if mode else []
    argv += ["--include-retired"] if include_retired else []
    fields = [("argv", arg) for arg in argv] + [("record", "0")]
    served, code, body = ask(store, "recall", fields, data)
    if served:
        return _served(code, body), SERVE
    from ..lightcli import answer

    found = answer(
        store,
        data,
        only=only,
        include_retired=include_retired,
        mode=mode,
        record=False,
        scoring="absolute",  # every match worth showing, not a prompt's budget
        threshold=0.05,
        top_k=20,
        budget=200_000,
    )
    return found, VIEWER


def search(store: Path, query: str, *, mode: str | None) -> tuple[dict[str, Any], str]:
    """``xbrain search`` of ``query`` (20 results), and the path that answered."""
    from ..lightsearch import search_document, served_search

    asked: dict[str, Any] = {"query": query, "limit": 20, **({"mode": mode} if mode else {})}
    served, code, body = served_search(str(store), asked)
    if served:
        return _served(code, body), SERVE
    return search_document(store, query, limit=20, mode=mode), VIEWER


def server_pid(store: Path) -> int | None:
    """The process id of the ``xbrain serve`` that answers for ``store`` now, or None."""
    from ..serveclient import ask

    served, code, body = ask(store, "ping", [])
    if not served or code != 0 or not body.strip().isdigit():
        return None
    return int(body.strip())
