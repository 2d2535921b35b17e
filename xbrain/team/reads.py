"""``get``, ``list``, ``entry get``, ``entry list`` and ``skill recall`` across the team
layers under a teams folder (the front ends name it): the glue between a command's
personal answer and :mod:`xbrain.team.layers`. The CLI and the MCP tools both read
through here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import XbrainError
from .place import Layer, team_layers

__all__ = [
    "get_entry",
    "get_resource",
    "list_entries",
    "list_resources",
    "published_skill",
    "recall_skills",
    "skill_level",
]


def _store(layer: Layer, cache_dir: Path | None = None) -> Any:
    from ..store import Store

    return Store(Path(layer.path), cache_dir=cache_dir)


def _first(root: str | Path | None, rid: str, field: str, read: Any) -> dict[str, Any] | None:
    """``{layer, trust, provenance, FIELD: read(team store)}`` from the first team whose
    accepted record ``rid`` is, or None."""
    for layer in team_layers(root):
        from .layers import derived, provenance

        try:
            known = derived(layer)
            if rid in known["hidden"]:
                continue
            found = read(_store(layer))
        except (XbrainError, OSError):
            continue
        where = provenance(known, rid)
        return {"layer": layer.label, "trust": "team", "provenance": where, field: found}
    return None


def get_resource(root: str | Path | None, rid: str) -> dict[str, Any] | None:
    """The accepted team resource ``rid`` as ``{layer, trust, provenance, resource}``
    (the first team that holds it), or None."""
    return _first(root, rid, "resource", lambda store: store.get(rid))


def get_entry(root: str | Path | None, rid: str) -> dict[str, Any] | None:
    """The accepted team entry ``rid`` as ``{layer, trust, provenance, entry}`` (the
    first team that holds it), or None. One answer of trust, as ``entry list`` and
    recall give it: ``team`` (``untrusted`` stays so), the entry's own field too."""
    found = _first(root, rid, "entry", lambda store: store.entry_get(rid))
    if found is not None:
        from .layers import layer_trust

        trust = layer_trust(found["entry"])
        found = {**found, "trust": trust, "entry": {**found["entry"], "trust": trust}}
    return found


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


def list_entries(
    root: str | Path | None,
    personal: dict[str, Any],
    kind: str | None = None,
    status: str | None = None,
) -> dict[str, Any]:
    """``personal`` (an ``entry list`` answer) with every team's accepted entries merged
    in, by kind, scope and name; a personal entry wins over a team's with its id."""
    layers = team_layers(root)
    if not layers:
        return personal
    from .layers import PERSONAL, derived, team_item

    merged = [{**e, "layer": PERSONAL} for e in personal["entries"]]
    seen = {e["id"] for e in personal["entries"]}
    for layer in layers:
        try:
            listed = _store(layer).entry_list(kind, status)["entries"]
            known = derived(layer)
        except (XbrainError, OSError, ValueError):
            continue
        hide = set(known.get("hidden", ()))
        for item in listed:
            if item["id"] not in seen and item["id"] not in hide:
                seen.add(item["id"])
                merged.append(team_item(item, layer, known, item["id"]))
    merged.sort(key=lambda e: (e["kind"], e["scope"], e["name"], e["layer"] != PERSONAL))
    return {**personal, "count": len(merged), "entries": merged}


def published_skill(
    root: str | Path | None,
    slug: str,
    revision: str | None,
    resource: str | None,
    cache_dir: Path | None = None,
) -> dict[str, Any] | None:
    """Level 1 (``resource`` None) or Level 2 of a team's published skill ``slug``: only
    its published revision (``revision``: None, its id or its number); None when no
    team has it."""
    from ..errors import NotFoundError

    def read(store: Any) -> dict[str, Any]:
        published: dict[str, Any] = store.skill_show(slug, None)
        if published.get("state") != "published" or revision not in (
            None,
            published.get("revision_id"),
            str(published.get("revision_number")),
        ):
            raise NotFoundError(f"No published revision {revision} of {slug} in the team.")
        if resource is None:
            return published
        found: dict[str, Any] = store.skill_component(slug, published["revision_id"], resource)
        return found

    return skill_level(root, slug, read, cache_dir)
