"""Lexical, semantic or hybrid retrieval (SPEC §14): which mode, the semantic leg, and
reciprocal rank fusion.

Each leg is gated on its own terms first — the lexical leg by its coverage rule and
scores, the semantic leg by the provider's score floor — and only what passed is fused,
by rank: ``Σ 1 / (60 + rank)`` over the legs that found a record. A fused score is never
thresholded, so a prompt that clears neither gate ("ok thanks") recalls nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInputError
from .query import SEMANTIC_FILE

if TYPE_CHECKING:
    from ..embedding import Provider

__all__ = ["MODES", "RRF_K", "fuse", "fused_search", "resolve_mode", "semantic_leg"]

MODES = ("lexical", "semantic", "hybrid")
RRF_K = 60
_PROVIDERS: dict[str, Provider] = {}  # one loaded model per process (the server keeps it)


def resolve_mode(control: Path, asked: str | None) -> str:
    """The mode a search or recall runs in: ``asked``, else hybrid when this device has
    semantic recall switched on (``reindex --semantic``) and the extra installed, else
    lexical. Asking for semantic or hybrid without them is an error."""
    if asked is not None and asked not in MODES:
        raise InvalidInputError(f"--mode must be one of: {', '.join(MODES)}.")
    if asked == "lexical" or (asked is None and not (control / SEMANTIC_FILE).is_file()):
        return "lexical"
    from .semantic import settings

    spec = settings(control) if control.is_dir() else None
    usable = spec is not None and _numpy_installed()
    if asked is None:
        return "hybrid" if usable else "lexical"
    if spec is None:
        raise InvalidInputError(
            f"--mode {asked} needs semantic recall on this device: xbrain reindex --semantic."
        )
    if not usable:
        from ..embedding import SemanticUnavailableError

        raise SemanticUnavailableError(
            "Semantic recall needs the extra: pip install 'xbrain[semantic]'."
        )
    return asked


def _numpy_installed() -> bool:
    from importlib.util import find_spec

    return find_spec("numpy") is not None


def provider_for(control: Path) -> Provider:
    """This device's provider, loaded once per process."""
    import json

    from ..embedding import load_provider
    from .semantic import settings

    spec = settings(control)
    if spec is None:
        raise InvalidInputError("Semantic recall is off on this device: xbrain reindex --semantic.")
    key = json.dumps(spec.to_json(), sort_keys=True)
    if key not in _PROVIDERS:
        _PROVIDERS[key] = load_provider(spec)
    return _PROVIDERS[key]


def semantic_leg(
    store_dir: Path, text: str, kinds: tuple[str, ...], limit: int
) -> list[tuple[str, str, float]]:
    """The records of ``kinds`` nearest to ``text`` above the provider's floor:
    (kind, id, cosine), best first. The vectors catch up with the indexes first."""
    from .semantic import catch_up, nearest

    control = store_dir / ".git"
    provider = provider_for(control)
    vectors = catch_up(control, provider)
    query = provider.embed([text])[0]
    return nearest(vectors, query, kinds, provider.floor, limit)


def fuse(legs: dict[str, list[str]]) -> list[tuple[str, float, list[str]]]:
    """Reciprocal rank fusion of ranked id lists: (id, fused score, the legs that found
    it, in the order given), best first, ties by id."""
    scores: dict[str, float] = {}
    found: dict[str, list[str]] = {}
    for leg, ids in legs.items():
        for rank, rid in enumerate(ids, start=1):
            scores[rid] = scores.get(rid, 0.0) + 1.0 / (RRF_K + rank)
            found.setdefault(rid, []).append(leg)
    ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
    return [(rid, round(score, 6), found[rid]) for rid, score in ranked]


def labelled(result: dict[str, Any], legs: list[str], similarity: float | None) -> dict[str, Any]:
    """A result with the legs that found it (and its cosine when the semantic leg did)."""
    out = {**result, "foundBy": legs}
    if similarity is not None:
        out["similarity"] = similarity
    return out


def fused_search(
    store_dir: Path, query: str, limit: int, mode: str, lexical: dict[str, Any]
) -> dict[str, Any]:
    """A search answer in ``mode`` (semantic or hybrid) from the lexical answer (taken
    wide) and the semantic leg: each result says which legs found it; ``score`` is the
    fused score, ``similarity`` the cosine when the semantic leg found it."""
    from .semantic import documents

    nearest = semantic_leg(store_dir, query, ("resource",), 20)
    similarity = {rid: score for _, rid, score in nearest}
    by_id = {item["citation"]["id"]: item for item in lexical["results"]}
    legs = {"semantic": [rid for _, rid, _ in nearest]}
    if mode == "hybrid":
        legs = {"lexical": list(by_id), **legs}
    fused = fuse(legs)[:limit]
    missing = [rid for rid, _, _ in fused if rid not in by_id]  # found by meaning alone
    docs = documents(store_dir / ".git", "resource", missing)
    results = []
    for rid, score, found in fused:
        if rid in by_id and "lexical" in found:
            base = {**by_id[rid]}
        elif rid in docs or rid in by_id:
            resource = docs[rid] if rid in docs else by_id[rid]["resource"]
            base = {
                "resource": resource,
                "matched": [],
                "citation": {
                    "id": rid,
                    "url": resource["source"]["url"],
                    "updatedAt": resource["updatedAt"],
                },
            }
        else:
            continue  # gone since the vectors were made
        base["score"] = score
        results.append(labelled(base, found, similarity.get(rid)))
    return {**lexical, "results": results, "retrieval": mode}
