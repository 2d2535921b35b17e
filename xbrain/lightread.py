"""``xbrain get`` and ``xbrain list`` without click, git or YAML: what an agent reads
after a search.

A search's brief results send the agent to ``xbrain get ID`` for the whole resource, and
``xbrain list`` browses the newest ones. The search index holds every live resource as
it stands at the commit it reflects, so when that commit is ``main`` right now (every
write keeps it so) both come from the index, as a search's results do. Anything else —
options this does not parse, a request the command refuses, a store without a current
index, an id the index does not hold (deleted, never saved, not a resource id) — goes to
the click command, which reads git and words every error.
"""

from __future__ import annotations

from .lightcli import default_store_path, parse_plain, print_document, store_location

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

__all__ = ["parse_get", "parse_list", "run_get", "run_list"]

_STORE = {"--store": ("store", store_location)}
_LIST_VALUES: dict[str, tuple[str, Any]] = {
    "--limit": ("limit", int),
    "--since": ("since", str),
    "--provider": ("provider", str),
    "--offset": ("offset", int),
    **_STORE,
}


def parse_get(args: list[str]) -> dict[str, str] | None:
    """``xbrain get ARGS`` as ``{"query": ID, "store": …}`` (ID and ``--store`` in their
    plain forms), or None when click should parse them."""
    found = parse_plain(args, _STORE, {}, query=True)
    return None if found is None or "query" not in found else found


def parse_list(args: list[str]) -> dict[str, Any] | None:
    """``xbrain list ARGS``' options in their plain forms, or None when click should
    parse them (any argument, ``--help``, a global option but ``--store``)."""
    found = parse_plain(args, _LIST_VALUES, {}, query=True)
    return None if found is None or "query" in found else found


def _control_dir(found: dict[str, Any]) -> Path:
    from pathlib import Path

    return Path(found.pop("store") if "store" in found else default_store_path()) / ".git"


def run_get(args: list[str]) -> int | None:
    """Run ``xbrain get ARGS`` if the index can answer: the exit code, or None."""
    found = parse_get(args)
    if found is None:
        return None
    from .search.query import indexed_resource

    try:
        resource = indexed_resource(_control_dir(found), found["query"])
    except (OSError, ValueError):  # a path the system refuses: the click command says so
        return None
    return None if resource is None else print_document(resource)


def run_list(args: list[str]) -> int | None:
    """Run ``xbrain list ARGS`` if the index can answer: the exit code, or None."""
    found = parse_list(args)
    if found is None:
        return None
    from functools import partial

    from .errors import XbrainError
    from .listing import from_index
    from .search.query import indexed_listing

    try:
        control = _control_dir(found)  # takes "store" out: the rest is the request
        listed = from_index(partial(indexed_listing, control), **found)
        if listed is not None:
            from .lightcli import teams_dir
            from .team.reads import list_resources

            listed = list_resources(teams_dir(), listed, **found)
    except (XbrainError, OSError, ValueError):  # the click command refuses it, in its words
        return None
    return None if listed is None else print_document(listed)
