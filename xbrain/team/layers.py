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

import contextlib
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from ..errors import XbrainError
from .place import Layer

__all__ = [
    "PERSONAL",
    "derived",
    "layer_trust",
    "layered_list",
    "layered_recall",
    "layered_search",
    "layered_skills",
    "provenance",
    "team_item",
]

PERSONAL = "personal"
_FAILURES = (XbrainError, OSError, ValueError)


def derived(layer: Layer) -> dict[str, Any]:
    """The layer's derived file (what it hides, provenance), worked out when behind."""
    from ..search.query import main_head
    from .keyed import read_keyed  # its provenance read by key: a prompt shows a few

    found = read_keyed(layer.path, main_head(Path(layer.path) / ".git"))
    if found is None:
        from .hidden import refresh  # git: only when the layer moved without a team command

        found = refresh(layer.path)
    return found


def provenance(known: dict[str, Any], key: str) -> dict[str, Any] | None:
    """``{committer, time, commit}`` of the last commit that changed record ``key`` (an
    id, or ``skill:SLUG``), or None when it cannot be told."""
    found = known.get("provenance", {}).get(key)
    if not isinstance(found, list) or len(found) != 3:
        return None
    from datetime import datetime, timezone

    from ..timestamps import format_timestamp

    when = format_timestamp(datetime.fromtimestamp(int(found[1]), timezone.utc))
    return {"committer": str(found[0]), "time": when, "commit": str(found[2])}


def layer_trust(item: dict[str, Any]) -> str:
    """A team record's trust, one rule for every read: ``team``, or ``untrusted`` for a
    record stored untrusted (it stays so)."""
    return "untrusted" if item.get("trust") == "untrusted" else "team"


def team_item(
    item: dict[str, Any], layer: Layer, known: dict[str, Any], key: str
) -> dict[str, Any]:
    """``item`` as a result of team ``layer``: its layer, trust and provenance."""
    trust = layer_trust(item)
    return {**item, "layer": layer.label, "trust": trust, "provenance": provenance(known, key)}


_returned: dict[str, tuple[str | None, dict[str, Any]]] = {}


@contextlib.contextmanager
def session_kept(layer: Layer, session: str | None) -> Iterator[None]:
    """Around one team layer's recall: remember what its session had shown, so that what
    the merge then leaves out is not counted as shown (``layered_recall`` undoes it)."""
    from ..recall.session import session_state

    control = Path(layer.path) / ".git"
    with session_state(control, session) as state:
        before = dict(state["shown"])
    yield
    _returned[layer.path] = (session, before)


def _unshow(layer: Layer, cut: set[str]) -> None:
    """Forget that ``layer``'s session showed ``cut`` (the merge left them out)."""
    kept = _returned.pop(layer.path, None)
    if kept is None or not cut or kept[0] is None:
        return
    from ..recall.session import session_state

    session, before = kept
    with session_state(Path(layer.path) / ".git", session) as state:
        for rid in cut:
            if rid in before:
                state["shown"][rid] = before[rid]
            else:
                state["shown"].pop(rid, None)


def _ask(layers: Iterable[Layer], run: Callable[[Layer], dict[str, Any]]) -> Any:
    """(layer, its answer, its derived file, what it hides) for every layer that answers."""
    from ..search.inmemory import in_memory  # a server ranks a team from memory

    for layer in layers:
        try:
            with in_memory():
                found = run(layer)
            known = derived(layer)
        except _FAILURES:
            continue
        yield layer, found, known, frozenset(known.get("hidden", ()))


def layered_search(
    personal: dict[str, Any],
    layers: list[Layer],
    run: Callable[[Layer], dict[str, Any]],
    limit: int,
) -> dict[str, Any]:
    """``xbrain search``: the best ``limit`` results of every layer by score."""
    if not layers:
        return personal
    results = _by_score(personal, layers, run, limit, lambda r: r["citation"]["id"])
    return {**personal, "results": results}


def _by_score(
    personal: dict[str, Any],
    layers: list[Layer],
    run: Callable[[Layer], dict[str, Any]],
    limit: int,
    key: Callable[[dict[str, Any]], str],
    keep: Callable[[dict[str, Any]], bool] = lambda _: True,
) -> list[dict[str, Any]]:
    """The best ``limit`` results of the personal answer and every layer's by score, each
    marked with its layer: a personal result wins over a team one with the same ``key``
    (the key a layer hides records by); a team result must pass ``keep``."""
    merged: list[tuple[dict[str, Any], Any]] = [(r, None) for r in personal["results"]]
    seen = {key(r) for r in personal["results"]}
    for layer, found, known, hide in _ask(layers, run):
        for result in found["results"]:
            name = key(result)
            if name not in seen and name not in hide and keep(result):
                seen.add(name)
                merged.append((result, (layer, known)))
    merged.sort(key=lambda pair: -float(pair[0]["score"]))
    return [
        {**r, "layer": PERSONAL} if at is None else team_item(r, at[0], at[1], key(r))
        for r, at in merged[:limit]
    ]


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
    merged: list[tuple[dict[str, Any], Any]] = [(r, None) for r in personal["results"]]
    seen = {r["id"] for r in personal["results"]}
    total = personal["total"]
    for layer, found, known, hide in _ask(layers, run):
        total += found["total"]
        for result in found["results"]:
            if result["id"] in hide or result["id"] in seen:
                total -= 1
                continue
            seen.add(result["id"])
            merged.append((result, (layer, known)))
    merged.sort(key=lambda pair: (pair[0]["updatedAt"], pair[0]["id"]), reverse=True)
    page = merged[offset : offset + limit]
    results = [
        {**r, "layer": PERSONAL} if at is None else team_item(r, at[0], at[1], r["id"])
        for r, at in page
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
    results = _by_score(
        personal,
        layers,
        run,
        limit,
        lambda r: f"skill:{r['slug']}",
        lambda r: bool(r.get("published")),
    )
    return {**personal, "count": len(results), "results": results}


_GROUP = {"skill": 2, "resource": 3}


def _group(result: dict[str, Any]) -> int:
    """Recall's order: entries a file routed, entries, skill pointers, resources."""
    if result["kind"] in _GROUP:
        return _GROUP[result["kind"]]
    return 0 if result.get("why", {}).get("via") == "path" else 1


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
    merged: list[tuple[dict[str, Any], Any]] = [(r, None) for r in personal["results"]]
    seen = {r["id"] for r in personal["results"]}
    skipped = list(personal["skipped"])
    returned: list[tuple[Layer, set[str]]] = []
    for layer, found, known, hide in _ask(layers, run):
        returned.append((layer, {str(r["id"]) for r in found["results"]}))
        skipped += [s for s in found["skipped"] if s["id"] not in seen]
        for result in found["results"]:
            if result["id"] in hide:
                continue
            if result["id"] in seen:
                skipped.append({"id": result["id"], "reason": f"personal wins over {layer.label}"})
                continue
            seen.add(result["id"])
            merged.append((result, (layer, known)))
    merged.sort(key=lambda pair: (_group(pair[0]), -float(pair[0]["score"])))
    results, used, taken = [], 0, dict[int, int]()
    for result, at in merged:
        group = _group(result)
        if taken.get(group, 0) >= cap or used + len(result["text"]) > limit:
            skipped.append({"id": result["id"], "reason": "over budget"})
            continue
        taken[group] = taken.get(group, 0) + 1
        used += len(result["text"])
        if at is None:
            results.append({**result, "layer": PERSONAL})
        else:
            results.append(team_item(result, at[0], at[1], str(result["id"])))
    shown = {str(r["id"]) for r in results if r["layer"] != PERSONAL}
    for layer, ids in returned:
        _unshow(layer, ids - shown)
    return {
        **personal,
        "results": results,
        "skipped": skipped,
        "budget": {"limit": limit, "used": used},
    }
