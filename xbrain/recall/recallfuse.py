"""Recall in semantic or hybrid mode: per kind, the lexical leg's candidates fused with
the semantic leg's (see :mod:`xbrain.semantic.hybrid` for the gates and the fusion)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..semantic.hybrid import SEMANTIC_DEPTH, fuse, semantic_leg, weights_for

__all__ = ["recall_fused"]


def recall_fused(
    store_dir: Path,
    prompt: str,
    lexical: dict[str, list[dict[str, Any]]],
    mode: str,
    options: Any,
    allowed: Any,
    terms: list[str],
) -> list[dict[str, Any]]:
    """Recall's candidates in ``mode``: per kind, the lexical leg's candidates (already
    gated and cut to size) fused with the semantic leg's records above the floor (an
    entry only if ``allowed`` lets the call show it; ``terms``: the prompt's). Each says
    which legs found it. A prompt of conversational words alone ("ok thanks", "好的",
    "可以") gets no semantic leg: it has no meaning to match, and a model's similarity to
    it is noise (the lexical leg still matches an entry's own queries and keywords)."""
    from ..search import entrycache
    from ..semantic.vectors import documents
    from .candidates import CHATTER, entry_candidate, resource_candidate, skill_candidate

    control = store_dir / ".git"
    kinds = tuple(options.kinds)
    from ..semantic.passages import passage_of

    near: dict[str, list[tuple[str, float]]] = {kind: [] for kind in kinds}
    place: dict[tuple[str, str], int] = {}
    depth = max(SEMANTIC_DEPTH, options.top_k)
    content = {term for term in terms if term not in CHATTER}
    if content:  # one content word ("收到", "nice job") is held to the stricter gate
        near_all = semantic_leg(store_dir, prompt[:2000], kinds, 4 * depth, len(content) < 2)
        for kind, rid, score, where in near_all:
            near[kind].append((rid, score))
            place[(kind, rid)] = where
    wide = min(20, options.top_k * 3)
    out: list[dict[str, Any]] = []
    for kind in kinds:
        lex = lexical.get(kind, []) if mode == "hybrid" else []
        docs = documents(control, kind, [rid for rid, _ in near[kind]])
        hits = [(rid, score) for rid, score in near[kind] if rid in docs]
        if kind == "entry":
            hits = [(rid, score) for rid, score in hits if allowed(docs[rid])]
        hits = hits[:depth]
        if kind == "entry":
            bodies = entrycache.bodies(control, [rid for rid, _ in hits])
        limit = options.top_k if kind == "entry" else wide
        made: dict[str, dict[str, Any]] = {}
        for rid, score in hits:
            why: dict[str, Any] = {"via": "semantic", "matched": [], "similarity": score}
            doc = {**docs[rid], "body": bodies.get(rid, "")} if kind == "entry" else docs[rid]
            shown = passage_of(kind, doc, place[(kind, rid)])
            if shown:
                why["passage"] = shown
            if kind == "entry":
                made[rid] = entry_candidate(doc, 0, why)
            elif kind == "skill":
                made["skill:" + rid] = skill_candidate(docs[rid], 0, why)
            else:
                made[rid] = resource_candidate(docs[rid], 0, why)
        semantic_why = {made_id: item["why"] for made_id, item in made.items()}
        by_id = {item["id"]: item for item in lex}
        complete = bool(lex) and len(lex[0]["why"]["matched"]) >= len(terms) > 0
        fused = fuse({"lexical": list(by_id), "semantic": list(made)}, weights_for(complete))
        fused = fused[:limit]
        for rid, score, found in fused:
            item = dict(by_id[rid]) if rid in by_id else dict(made[rid])
            if rid in by_id and rid in semantic_why:
                extra = {
                    k: v for k, v in semantic_why[rid].items() if k in ("similarity", "passage")
                }
                item["why"] = {**item["why"], **extra}
            item["score"] = score
            item["foundBy"] = found
            out.append(item)
    return out
