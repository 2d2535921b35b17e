"""Reads across layers: the personal store first, then every team store.

Each function takes the personal answer the command already computed and a way to ask
one team layer the same question, and merges: every result says its ``layer``
(``personal`` or ``team:NAME``); a personal record wins over a team record with the same
id; a team result carries ``trust: team`` (``untrusted`` stays so) and ``provenance``
(who committed it last, when). What a team has not accepted (``hidden``) is left out.
With no team layer the personal answer is returned unchanged, byte for byte.

A team layer that cannot be read (removed meanwhile, damaged, busy) is skipped: a read
never fails because of a team.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..core import Core
from ..core.registry import record_path
from ..errors import XbrainError
from ..kinds import skill as skill_kind
from ..timestamps import format_timestamp
from .hidden import hidden_ids
from .place import Layer

__all__ = [
    "PERSONAL",
    "layered_list",
    "layered_recall",
    "layered_search",
    "layered_skills",
    "provenance",
    "team_item",
]

PERSONAL = "personal"
_FAILURES = (XbrainError, OSError, ValueError)
_SCAN = 10_000  # commits a provenance walk looks back at most
_known: dict[tuple[str, str, str], dict[str, Any] | None] = {}


def provenance(layer: Layer, kind: str, rid: str) -> dict[str, Any] | None:
    """``{committer, time, commit}`` of the last commit that changed a team record
    (``kind`` ``skill``: ``rid`` is its slug), or None when it cannot be told."""
    core = Core(Path(layer.path))
    try:
        with core.git() as git:
            head = str(git.head())
            key = (layer.path, head, f"{kind}:{rid}")
            if key in _known:
                return _known[key]
            path = skill_kind.state_path(rid) if kind == "skill" else record_path(kind, rid)
            found = git.path_commits(path, 1, scan=_SCAN)
    except _FAILURES:
        return None
    shown = None
    if found:
        when = format_timestamp(datetime.fromtimestamp(found[0].time, timezone.utc))
        shown = {"committer": found[0].author, "time": when, "commit": str(found[0].id)}
    _known[key] = shown
    return shown


def team_item(item: dict[str, Any], layer: Layer, kind: str, rid: str) -> dict[str, Any]:
    """``item`` as a result of team ``layer``: its layer, trust and provenance."""
    trust = "untrusted" if item.get("trust") == "untrusted" else "team"
    return {
        **item,
        "layer": layer.label,
        "trust": trust,
        "provenance": provenance(layer, kind, rid),
    }


def _ask(layers: Iterable[Layer], run: Callable[[Layer], dict[str, Any]]) -> Any:
    """(layer, its answer, what it hides) for every team layer that answers."""
    for layer in layers:
        try:
            found = run(layer)
            hide = hidden_ids(layer.path)
        except _FAILURES:
            continue
        yield layer, found, hide


def layered_search(
    personal: dict[str, Any],
    layers: list[Layer],
    run: Callable[[Layer], dict[str, Any]],
    limit: int,
) -> dict[str, Any]:
    """``xbrain search``: the best ``limit`` results of every layer by score."""
    if not layers:
        return personal
    merged: list[tuple[dict[str, Any], Layer | None]] = [(r, None) for r in personal["results"]]
    seen = {r["citation"]["id"] for r in personal["results"]}
    for layer, found, hide in _ask(layers, run):
        for result in found["results"]:
            rid = result["citation"]["id"]
            if rid not in seen and rid not in hide:
                seen.add(rid)
                merged.append((result, layer))
    merged.sort(key=lambda pair: -float(pair[0]["score"]))
    results = [
        {**r, "layer": PERSONAL}
        if layer is None
        else team_item(r, layer, "resource", r["citation"]["id"])
        for r, layer in merged[:limit]
    ]
    return {**personal, "results": results}


def layered_list(
    personal: dict[str, Any],
    layers: list[Layer],
    run: Callable[[Layer], dict[str, Any]],
    limit: int,
    offset: int,
) -> dict[str, Any]:
    """``xbrain list``: every layer's newest first (``run`` asks a layer for its first
    ``offset + limit``)."""
    if not layers:
        return personal
    merged: list[tuple[dict[str, Any], Layer | None]] = [(r, None) for r in personal["results"]]
    seen = {r["id"] for r in personal["results"]}
    total = personal["total"]
    for layer, found, hide in _ask(layers, run):
        total += found["total"]
        for result in found["results"]:
            if result["id"] in hide or result["id"] in seen:
                total -= 1
                continue
            seen.add(result["id"])
            merged.append((result, layer))
    merged.sort(key=lambda pair: (pair[0]["updatedAt"], pair[0]["id"]), reverse=True)
    page = merged[offset : offset + limit]
    results = [
        {**r, "layer": PERSONAL} if layer is None else team_item(r, layer, "resource", r["id"])
        for r, layer in page
    ]
    return {**personal, "total": max(total, len(merged)), "results": results}


def layered_skills(
    personal: dict[str, Any],
    layers: list[Layer],
    run: Callable[[Layer], dict[str, Any]],
    limit: int,
) -> dict[str, Any]:
    """``xbrain skill recall QUERY`` (Level 0): published team skills beside yours."""
    if not layers:
        return personal
    merged: list[tuple[dict[str, Any], Layer | None]] = [(r, None) for r in personal["results"]]
    seen = {r["slug"] for r in personal["results"]}
    for layer, found, hide in _ask(layers, run):
        for result in found["results"]:
            slug = result["slug"]
            if slug not in seen and f"skill:{slug}" not in hide and result.get("published"):
                seen.add(slug)
                merged.append((result, layer))
    merged.sort(key=lambda pair: -float(pair[0]["score"]))
    results = [
        {**r, "layer": PERSONAL} if layer is None else team_item(r, layer, "skill", r["slug"])
        for r, layer in merged[:limit]
    ]
    return {**personal, "count": len(results), "results": results}


_GROUP = {"skill": 2, "resource": 3}


def _group(result: dict[str, Any]) -> int:
    """Recall's order: entries a file routed, entries, skill pointers, resources."""
    if result["kind"] in _GROUP:
        return _GROUP[result["kind"]]
    return 0 if result.get("why", {}).get("via") == "path" else 1


def _kind_and_id(result: dict[str, Any]) -> tuple[str, str]:
    if result["kind"] == "skill":
        return "skill", str(result["id"]).removeprefix("skill:")
    return ("resource" if result["kind"] == "resource" else "entry"), str(result["id"])


def layered_recall(
    personal: dict[str, Any],
    layers: list[Layer],
    run: Callable[[Layer], dict[str, Any]],
    cap: int,
) -> dict[str, Any]:
    """``xbrain recall`` and the hooks: every layer's results in recall's order (routed
    entries, entries, skills, resources; by score within each), at most ``cap`` of each
    group, within the personal answer's budget; what does not fit is skipped."""
    if not layers:
        return personal
    limit = int(personal["budget"]["limit"])
    merged: list[tuple[dict[str, Any], Layer | None]] = [(r, None) for r in personal["results"]]
    seen = {r["id"] for r in personal["results"]}
    skipped = list(personal["skipped"])
    for layer, found, hide in _ask(layers, run):
        skipped += [s for s in found["skipped"] if s["id"] not in seen]
        for result in found["results"]:
            if result["id"] in hide:
                continue
            if result["id"] in seen:
                skipped.append({"id": result["id"], "reason": f"personal wins over {layer.label}"})
                continue
            seen.add(result["id"])
            merged.append((result, layer))
    merged.sort(key=lambda pair: (_group(pair[0]), -float(pair[0]["score"])))
    results, used, taken = [], 0, dict[int, int]()
    for result, layer in merged:
        group = _group(result)
        if taken.get(group, 0) >= cap or used + len(result["text"]) > limit:
            skipped.append({"id": result["id"], "reason": "over budget"})
            continue
        taken[group] = taken.get(group, 0) + 1
        used += len(result["text"])
        if layer is None:
            results.append({**result, "layer": PERSONAL})
        else:
            results.append(team_item(result, layer, *_kind_and_id(result)))
    return {
        **personal,
        "results": results,
        "skipped": skipped,
        "budget": {"limit": limit, "used": used},
    }
