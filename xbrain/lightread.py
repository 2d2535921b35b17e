"""``xbrain get`` without click, git or YAML: the read an agent makes after a search.

A search's brief results send the agent to ``xbrain get ID`` for the whole resource. The
search index holds every live resource as it stands at the commit it reflects, so when
that commit is ``main`` right now (every write keeps it so) the resource comes from the
index, as a search's results do. Anything else — options this does not parse, a store
without a current index, an id the index does not hold (deleted, never saved, not a
resource id) — goes to the click command, which reads git and words every error.
"""

from __future__ import annotations

from .lightcli import default_store_path, parse_plain, print_document, store_location

__all__ = ["parse_get", "run_get"]


def parse_get(args: list[str]) -> dict[str, str] | None:
    """``xbrain get ARGS`` as ``{"query": ID, "store": …}`` (ID and ``--store`` in their
    plain forms), or None when click should parse them."""
    found = parse_plain(args, {"--store": ("store", store_location)}, {}, query=True)
    return None if found is None or "query" not in found else found


def run_get(args: list[str]) -> int | None:
    """Run ``xbrain get ARGS`` if the index can answer: the exit code, or None."""
    found = parse_get(args)
    if found is None:
        return None
    store = found["store"] if "store" in found else default_store_path()
    from pathlib import Path

    from .search.query import indexed_resource

    try:
        resource = indexed_resource(Path(store) / ".git", found["query"])
    except (OSError, ValueError):  # a path the system refuses: the click command says so
        return None
    return None if resource is None else print_document(resource)
