"""The MCP read tools over the personal store and every team layer (``xbrain team``),
as the CLI reads them: each result says its ``layer``; a team's carries ``trust: team``
and ``provenance``; a personal record wins over a team's with its id; what a team has
not accepted is left out. With no team (``Tools.teams`` None, or no team under it) each
answer is the personal store's, unchanged."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from ..errors import InvalidInputError, NotFoundError
from ..team.place import team_layers

__all__ = ["Tools", "get", "list_resources", "recall", "recall_skill", "search"]


class Tools(Protocol):
    """What a read needs of :class:`xbrain.mcp_server.tools.Tools`."""

    store_dir: Path
    cache_dir: Path
    teams: str | Path | None

    def store(self) -> Any:
        """The personal store, opened for one call."""


def search(tools: Tools, args: dict[str, Any]) -> dict[str, Any]:
    """``search``: the best ``limit`` results of every layer by score."""
    from ..retrieval.run import search_store
    from ..search.query import brief
    from ..team.layers import layered_search

    asked = {
        "limit": args.get("limit", 5),
        "domain": args.get("domain"),
        "feature": args.get("feature"),
        "style": args.get("style"),
        "mode": args.get("mode"),
    }
    query = args.get("query", "")
    found = search_store(tools.store_dir, tools.cache_dir, query, **asked)
    layers = team_layers(tools.teams)
    if layers:

        def ask(layer: Any) -> dict[str, Any]:
            return search_store(Path(layer.path), tools.cache_dir, query, **asked)

        found = layered_search(found, layers, ask, asked["limit"])
    return found if args.get("full") is True else brief(found)


def get(tools: Tools, args: dict[str, Any]) -> dict[str, Any]:
    """``get``: your resource; else an accepted team's, with its layer, trust and
    provenance beside its fields."""
    try:
        return dict(tools.store().get(args["id"]))
    except NotFoundError:
        from ..team.reads import get_resource

        found = get_resource(tools.teams, args["id"])
        if found is None:
            raise
        return {**found.pop("resource"), **found}


def list_resources(tools: Tools, args: dict[str, Any]) -> dict[str, Any]:
    """``list``: every layer's newest first."""
    from ..team.reads import list_resources as layered

    given = {
        "limit": args.get("limit", 20),
        "since": args.get("since"),
        "provider": args.get("provider"),
        "offset": args.get("offset", 0),
    }
    return layered(tools.teams, tools.store().list(**given), **given)


def recall(tools: Tools, args: dict[str, Any]) -> dict[str, Any]:
    """``recall``: every layer's results in recall's order, within the budget."""
    from ..recall.route import Options, Request
    from ..recall.route import recall as run

    project = args.get("project")
    options = Options.of(
        mode=args.get("mode"),
        scoring=args.get("scoring"),
        top_k=args.get("top_k"),
        budget=args.get("budget"),
        project=project if isinstance(project, str) else None,
    )
    prompt = args["prompt"]
    if not isinstance(prompt, str):
        raise InvalidInputError("prompt must be text.")
    request = Request(prompt[:20_000], args.get("session"), "mcp", str(tools.store_dir))
    found = run(tools.store_dir, tools.cache_dir, request, options)
    layers = team_layers(tools.teams)
    if not layers:
        return found
    from ..team.layers import layered_recall, session_kept

    def ask(layer: Any) -> dict[str, Any]:
        with session_kept(layer, request.session):
            return run(Path(layer.path), tools.cache_dir, request, options)

    return layered_recall(found, layers, ask, options.top_k)


def recall_skill(tools: Tools, args: dict[str, Any]) -> dict[str, Any]:
    """``recall_skill``: Level 0 with the teams' published skills beside yours; Level 1
    or 2 of your skill, else of a team's published one."""
    from ..team.reads import published_skill, recall_skills

    slug, revision, resource = args.get("slug"), args.get("revision"), args.get("resource")
    store = tools.store()
    if slug is None:
        if "query" not in args or revision is not None or resource is not None:
            raise InvalidInputError("Give query (Level 0), or slug (Levels 1 and 2).")
        limit = args.get("limit", 5)
        found = store.skill_recall(args["query"], limit)
        return recall_skills(tools.teams, found, args["query"], limit, tools.cache_dir)
    try:
        if resource is None:
            return dict(store.skill_show(slug, revision))
        return dict(store.skill_component(slug, revision, resource))
    except NotFoundError:
        team = published_skill(tools.teams, slug, revision, resource, tools.cache_dir)
        if team is None:
            raise
        return team
