"""``xbrain search`` without click: the light path the console script tries first.

As ``lightcli`` does for ``recall``: only the plain forms of the command's own options
are parsed here (``--name VALUE``, ``--name=VALUE``, the query, ``-``), and anything else
returns None so click parses it and says what is wrong as it always does. What a search
prints is one function, ``search_document``, that click's command and ``xbrain serve``
call too.
"""

from __future__ import annotations

from .lightcli import (
    MODES,
    Progress,
    cache_dir,
    default_store_path,
    failed,
    note_missing_store,
    parse_plain,
    print_document,
    print_served,
    stdin_stream,
    store_location,
    teams_dir,
)

TYPE_CHECKING = False  # on every search's path: neither typing nor pathlib at import
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

__all__ = ["parse_search", "run_search", "search_document", "served_search"]

_SEARCH_VALUES: dict[str, tuple[str, Any]] = {
    "--limit": ("limit", int),
    "--domain": ("domain", str),
    "--feature": ("feature", str),
    "--style": ("style", str),
    "--mode": ("mode", MODES),
    "--store": ("store", store_location),
}
_SEARCH_FLAGS = {"--brief": "brief"}


def parse_search(args: list[str]) -> dict[str, Any] | None:
    """The parameters of ``xbrain search ARGS`` (QUERY and the plain options; not
    ``--at`` or ``--provider-config``), or None when click should parse them."""
    found = parse_plain(args, _SEARCH_VALUES, _SEARCH_FLAGS, query=True)
    if found is None or "query" not in found:
        return None
    return found


def search_document(
    store: Path, query: str, *, brief: bool = False, progress: Any = None, **given: Any
) -> dict[str, Any]:
    """What ``xbrain search`` prints for ``query`` (``given``: limit, domain, feature,
    style, mode)."""
    from .retrieval.run import search_store
    from .search.query import brief as shorten

    found = search_store(store, cache_dir(), query, progress=progress, **given)
    if given.get("at") is None and given.get("provider") is None:
        found = _with_teams(found, query, given)
    return shorten(found) if brief else found


def _with_teams(found: dict[str, Any], query: str, given: dict[str, Any]) -> dict[str, Any]:
    """``found`` with every team layer's results merged in (``xbrain team``)."""
    from .team.place import team_layers

    layers = team_layers(teams_dir())
    if not layers:
        return found
    from pathlib import Path

    from .retrieval.run import search_store
    from .team.layers import layered_search

    asked = {k: v for k, v in given.items() if k not in ("at", "provider")}

    def ask(layer: Any) -> dict[str, Any]:
        return search_store(Path(layer.path), cache_dir(), query, **asked)

    return layered_search(found, layers, ask, given.get("limit") or 5)


def served_search(store: str, asked: dict[str, Any]) -> tuple[bool, int, bytes]:
    """A running ``xbrain serve``'s answer to a search: (served, exit code, what to print)."""
    import json

    from .serveclient import ask

    return ask(store, "search", [("args", json.dumps(asked))])


def run_search(args: list[str]) -> int | None:
    """Run ``xbrain search ARGS`` if this module can parse them: the exit code, or None."""
    found = parse_search(args)
    if found is None:
        return None
    store = found.pop("store", None)
    where = store if store is not None else default_store_path()
    progress = Progress("indexing")  # a first search after clone or import builds the index
    try:
        query = found.pop("query")
        if query == "-":
            from .search.query import read_query

            query = read_query(stdin_stream())
        served, code, body = served_search(where, {"query": query, **found})
        if served:
            return print_served(code, body)
        from pathlib import Path

        from .autoserve import WARMING, warming

        warm = warming(where, found.get("mode"))  # a server starts: answer lexically
        asked = {**found, "mode": "lexical"} if warm else found
        result = search_document(Path(where), query, progress=progress, **asked)
        if warm:
            result["retrieval"] = WARMING
        note_missing_store(where)
    except Exception as exc:
        return failed(exc)
    finally:
        progress.finish()
    return print_document(result)
