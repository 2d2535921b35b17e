"""Level 0 of skill recall in every mode: the lexical ranking of
:mod:`xbrain.search.skills`, in semantic or hybrid mode fused with the semantic leg's
skills exactly as ``search`` fuses resources (:mod:`xbrain.semantic.hybrid`: each leg
gated on its own terms, reciprocal rank fusion, the semantic leg only after a lexical
best that holds every term). Each result says which legs found it, and its cosine when
the semantic leg did."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..search.skills import checked_query, ranked
from ..search.tokenize import Tokenizer
from ..semantic.hybrid import LEXICAL_DEPTH, SEMANTIC_DEPTH, fuse, semantic_leg, weights_for

__all__ = ["fused_level0", "recall"]


def recall(
    store_dir: Path,
    cache_dir: Path,
    query: str,
    limit: int = 5,
    tokenizer: Tokenizer | None = None,
    mode: str | None = None,
) -> dict[str, Any]:
    """Level 0: ranked skill descriptors ``{slug, name, description, published, score}``
    under the query as asked and the terms it was searched by. ``mode``: lexical,
    semantic or hybrid (None: hybrid when semantic recall is on, as ``search`` and
    ``recall``; the answer then says ``retrieval`` and each result the legs that found
    it). ``tokenizer``: a caller's, reused and left open."""
    from ..semantic.hybrid import or_lexical, resolve_mode

    trimmed = checked_query(query, limit)
    chosen = resolve_mode(store_dir / ".git", mode)
    if chosen == "lexical":
        return {"query": trimmed} | ranked(store_dir, cache_dir, trimmed, limit, tokenizer)
    lexical = ranked(store_dir, cache_dir, trimmed, max(limit, LEXICAL_DEPTH), tokenizer)
    both, note = or_lexical(
        store_dir / ".git", mode, lambda: fused_level0(store_dir, trimmed, limit, chosen, lexical)
    )
    if both is None:  # the semantic leg failed in the default mode: the lexical answer
        both = {**lexical, "count": min(limit, lexical["count"])} | note
        both["results"] = lexical["results"][:limit]
    return {"query": trimmed} | both


def fused_level0(
    store_dir: Path, query: str, limit: int, mode: str, lexical: dict[str, Any]
) -> dict[str, Any]:
    """Level 0's answer in ``mode`` (semantic or hybrid) from its lexical answer (taken
    ``LEXICAL_DEPTH`` wide) and the semantic leg."""
    from ..search.chatter import CHATTER
    from ..semantic.vectors import documents

    content = [term for term in lexical["terms"] if term not in CHATTER]
    nearest = []  # as search and recall: chatter has no meaning to match
    if content:
        terse = len(set(content)) < 2
        nearest = semantic_leg(store_dir, query, ("skill",), max(SEMANTIC_DEPTH, limit), terse)
    similarity = {slug: score for _, slug, score, _ in nearest}
    by_slug = {hit["slug"]: hit for hit in lexical["results"][:LEXICAL_DEPTH]}
    legs = {"semantic": [slug for _, slug, _, _ in nearest]}
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
