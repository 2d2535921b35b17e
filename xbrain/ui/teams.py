"""The viewer's team layers (``xbrain team``): which store a record page reads, the
layer each listed record comes from, and the team review queue.

A team record page reads the team's own store (its local clone, as ``xbrain get`` and
``xbrain entry get`` read it) through the facade, with the layer's derived file for what
the team hides and who last changed the record; the viewer never writes to a team store
except through ``xbrain team review``'s own function, as the review queue's accept and
reject. Lists merge what a read of the layers shows: a personal record wins over a team
record with the same id, and what a team hides is left out.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import XbrainError

if TYPE_CHECKING:
    from starlette.requests import Request

    from ..store import Store
    from .viewer import Viewer

__all__ = ["Where", "decide", "entries", "queues", "resources", "skills", "where"]

PERSONAL = "personal"


class Where:
    """The store a page reads: the personal one, or one team's (``team`` its name), the
    link prefix of its record pages and, for a team, its derived file."""

    def __init__(
        self, store: Store, link: str, team: str | None = None, known: dict[str, Any] | None = None
    ) -> None:
        self.store = store
        self.link = link
        self.team = team
        self.known = known or {}

    @property
    def layer(self) -> str:
        """``personal`` or ``team:NAME``."""
        return PERSONAL if self.team is None else f"team:{self.team}"

    def about(self, key: str) -> dict[str, Any]:
        """What a team record's page says of record ``key`` (an id, or ``skill:SLUG``):
        its layer, trust and provenance; empty for a personal record."""
        if self.team is None:
            return {}
        from ..team.layers import provenance

        hidden = key in self.known.get("hidden", ())
        return {
            "layer": self.layer,
            "team": self.team,
            "trust": "not accepted" if hidden else "team",
            "hidden": hidden,
            "provenance": provenance(self.known, key),
        }


def _root() -> Path:
    from ..lightcli import teams_dir

    return Path(teams_dir())


def where(viewer: Viewer, request: Request) -> Where:
    """The store the request's page reads: team ``{team}``'s when the path names one
    (which must be a team of this user's: exit 3 otherwise), else the personal store."""
    name = request.path_params.get("team")
    if name is None:
        return Where(viewer.store, viewer.base)
    from ..store import Store
    from ..team.layers import derived
    from ..team.manage import team_path
    from ..team.place import Layer

    path = team_path(_root(), str(name))  # a valid name of a team that exists
    layer = Layer(str(name), str(path))
    known = viewer.call(derived, layer)
    store = Store(path, cache_dir=_cache())
    return Where(store, f"{viewer.base}/team/{name}", str(name), known)


def _cache() -> Path:
    from ..lightcli import cache_dir

    return cache_dir()


def _layers() -> list[Any]:
    from ..team.place import team_layers

    return team_layers(_root())


def _each_team(viewer: Viewer, read: Any) -> list[tuple[Any, Any, frozenset[str]]]:
    """(layer, ``read(team store)``, what it hides) for every team that can be read."""
    from ..store import Store
    from ..team.layers import derived

    found = []
    for layer in _layers():
        try:
            known = viewer.call(derived, layer)
            answer = viewer.call(read, Store(Path(layer.path), cache_dir=_cache()))
        except (XbrainError, OSError, ValueError):
            continue  # a team that cannot be read is left out, as every read does
        found.append((layer, answer, frozenset(str(k) for k in known.get("hidden", ()))))
    return found


def entries(
    viewer: Viewer, personal: list[dict[str, Any]], kind: str | None, status: str | None
) -> list[dict[str, Any]]:
    """``personal`` (an ``entry list``) with every team's entries the team shows, each
    marked with its layer."""
    merged = [{**item, "layer": PERSONAL} for item in personal]
    seen = {item["id"] for item in personal}
    for layer, found, hidden in _each_team(viewer, lambda s: s.entry_list(kind, status)):
        for item in found["entries"]:
            if item["id"] not in seen and item["id"] not in hidden:
                seen.add(item["id"])
                merged.append({**item, "layer": layer.label, "team": layer.name})
    return merged


def skills(viewer: Viewer, personal: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``personal`` (a ``skill list``) with every team's published skills, each marked
    with its layer (a skill of yours wins over a team's of the same name)."""
    merged = [{**item, "layer": PERSONAL} for item in personal]
    seen = {item["slug"] for item in personal}
    for layer, found, hidden in _each_team(viewer, lambda s: s.skill_list()):
        for item in found["skills"]:
            if item["slug"] not in seen and f"skill:{item['slug']}" not in hidden:
                seen.add(item["slug"])
                merged.append({**item, "layer": layer.label, "team": layer.name})
    return merged


def resources(viewer: Viewer, offset: int, limit: int) -> dict[str, Any]:
    """A page of ``xbrain list`` (newest first) over the personal store and every team
    layer, as the command prints it (called under the viewer's lock)."""
    from ..team.reads import list_resources

    personal = viewer.store.list(limit=limit, offset=offset)
    return list_resources(_root(), personal, limit=limit, offset=offset)


def queues(viewer: Viewer) -> list[dict[str, Any]]:
    """Each team's review queue (``xbrain team review NAME``), with whether this user
    (the personal store's identity) is one of its reviewers."""
    from ..team.review import listing
    from ..team.share import identity_of

    if not _layers():
        return []
    who = viewer.call(identity_of, viewer.store)
    found = []
    for layer in _layers():
        try:
            queue = viewer.call(listing, _root(), layer.name)
        except (XbrainError, OSError, ValueError) as exc:
            found.append({"team": layer.name, "error": str(exc), "reviewer": False})
            continue
        found.append({**queue, "reviewer": who in queue["reviewers"], "who": who})
    return found


def decide(viewer: Viewer, team: str, verb: str, key: str, reason: str | None) -> str:
    """Accept or reject proposal ``key`` of ``team`` as ``xbrain team review`` does
    (pulled first, one decision committed, pushed); the line that says what happened,
    a push the host refused included (the decision is kept for ``xbrain team sync``)."""
    from ..team.review import decide as review

    done = viewer.call(review, viewer.store, _root(), team, verb, [key], _cache(), reason)
    said = f"{'Accepted' if verb == 'accept' else 'Rejected'} {key} in team {team}"
    if done["pushed"]:
        return f"{said} (pushed)."
    error = str(done.get("error") or "refused").strip()
    return f"{said}; the push failed ({error}): kept for the next xbrain team sync."
