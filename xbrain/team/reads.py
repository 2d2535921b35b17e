"""``get``, ``list`` and ``skill recall`` across the team layers under a teams folder
(the front ends name it): the glue between a command's personal answer and
:mod:`xbrain.team.layers`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import XbrainError
from .place import Layer, team_layers

__all__ = ["get_resource", "list_resources", "recall_skills", "skill_level"]


def _store(layer: Layer, cache_dir: Path | None = None) -> Any:
    from ..store import Store

    return Store(Path(layer.path), cache_dir=cache_dir)


def get_resource(root: str | Path | None, rid: str) -> dict[str, Any] | None:
    """The accepted team resource ``rid`` as ``{layer, trust, provenance, resource}``
    (the first team that holds it), or None."""
    for layer in team_layers(root):
        from .layers import derived, provenance

        try:
            known = derived(layer)
            if rid in known["hidden"]:
                continue
            resource = _store(layer).get(rid)
        except (XbrainError, OSError):
            continue
        where = provenance(known, rid)
        return {"layer": layer.label, "trust": "team", "provenance": where, "resource": resource}
    return None


def list_resources(
    root: str | Path | None,
    personal: dict[str, Any],
    *,
    limit: int = 20,
    offset: int = 0,
    since: str | None = None,
    provider: str | None = None,
) -> dict[str, Any]:
    """``personal`` (a ``list`` answer) with every team's resources merged in."""
    layers = team_layers(root)
    if not layers:
        return personal
    from .layers import layered_list

    def ask(layer: Layer) -> dict[str, Any]:
        listed: dict[str, Any] = _store(layer).list(
            limit=min(offset + limit, 1000), since=since, provider=provider
        )
        return listed

    return layered_list(personal, layers, ask, limit, offset)


def recall_skills(
    root: str | Path | None,
    personal: dict[str, Any],
    query: str,
    limit: int,
    cache_dir: Path | None,
) -> dict[str, Any]:
    """Level 0 (``personal``: the store's own answer) with the teams' published skills."""
    layers = team_layers(root)
    if not layers:
        return personal
    from .layers import layered_skills

    def ask(layer: Layer) -> dict[str, Any]:
        found: dict[str, Any] = _store(layer, cache_dir).skill_recall(query, limit)
        return found

    return layered_skills(personal, layers, ask, limit)


def skill_level(
    root: str | Path | None, slug: str, read: Any, cache_dir: Path | None = None
) -> dict[str, Any] | None:
    """Level 1 or 2 of a team's published skill ``slug`` (``read(store)``: the
    personal command's own read, on a team store), with its layer; None when no team
    has it published."""
    for layer in team_layers(root):
        from .layers import derived, provenance

        try:
            known = derived(layer)
            if f"skill:{slug}" in known["hidden"]:
                continue
            found: dict[str, Any] = read(_store(layer, cache_dir))
        except (XbrainError, OSError):
            continue
        where = provenance(known, f"skill:{slug}")
        return {**found, "layer": layer.label, "trust": "team", "provenance": where}
    return None
