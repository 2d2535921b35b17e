"""Level 0 of skill recall in semantic or hybrid mode: the lexical ranking of
:mod:`.skills` fused with the semantic leg's skills, exactly as ``search`` fuses
resources (:mod:`.hybrid`: each leg gated on its own terms, reciprocal rank fusion, the
semantic leg only after a lexical best that holds every term). Each result says which
legs found it, and its cosine when the semantic leg did."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .hybrid import LEXICAL_DEPTH, SEMANTIC_DEPTH, fuse, semantic_leg, weights_for

__all__ = ["fused_level0"]


def fused_level0(
    store_dir: Path, query: str, limit: int, mode: str, lexical: dict[str, Any]
) -> dict[str, Any]:
    """Level 0's answer in ``mode`` (semantic or hybrid) from its lexical answer (taken
    ``LEXICAL_DEPTH`` wide) and the semantic leg."""
    from .semantic import documents

    nearest = semantic_leg(store_dir, query, ("skill",), max(SEMANTIC_DEPTH, limit))
    similarity = {slug: score for _, slug, score in nearest}
    by_slug = {hit["slug"]: hit for hit in lexical["results"][:LEXICAL_DEPTH]}
    legs = {"semantic": [slug for _, slug, _ in nearest]}
    complete = False
    if mode == "hybrid":
        legs = {"lexical": list(by_slug), **legs}
        terms = lexical["terms"]
        top = lexical["results"][0] if lexical["results"] else None
        complete = top is not None and len(top["matched"]) >= len(terms) > 0
    fused = fuse(legs, weights_for(complete))[:limit]
    docs = documents(store_dir / ".git", "skill", [s for s, _, _ in fused if s not in by_slug])
    results = []
    for slug, score, found in fused:
        if slug in by_slug:
            hit = {**by_slug[slug], "score": score}
        elif slug in docs:
            doc = docs[slug]
            hit = {
                "slug": doc["slug"],
                "name": doc["name"],
                "description": doc["description"],
                "published": doc["published"],
                "revision_id": doc["revision_id"],
                "score": score,
                "matched": [],
            }
        else:
            continue  # archived or gone since the vectors were made
        hit["foundBy"] = found
        if slug in similarity:
            hit["similarity"] = similarity[slug]
        results.append(hit)
    return {**lexical, "count": len(results), "results": results, "retrieval": mode}
