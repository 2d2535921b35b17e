"""``search_store``: what the CLI and MCP call to search; the fast path first.

A search the current index can answer (the usual case) never imports git or YAML
machinery; anything else goes to :func:`xbrain.retrieval.operations.search`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..search.query import current, validate_request
from ..search.tokenize import Tokenizer

__all__ = ["ranked", "search_store"]


def search_store(
    store_dir: Path,
    cache_dir: Path,
    query: str,
    *,
    limit: int = 5,
    include_superseded: bool = False,
    as_of: str | None = None,
    **options: Any,
) -> dict[str, Any]:
    """:func:`ranked`, without the resources not in force (proposed, superseded,
    outside their validity at ``as_of``, default now), or with them marked under
    ``standing`` (``include_superseded``)."""
    from ..search.resourcestanding import mark, not_in_force, widened

    filters = [options.get(key) for key in ("domain", "feature", "style")]
    validate_request(query, limit, *filters)
    if as_of is not None:
        from ..kinds.entryfacts import moment

        as_of = moment(as_of, "--as-of")
    hidden = not_in_force(store_dir, as_of, options.get("at"))
    if not hidden:
        return ranked(store_dir, cache_dir, query, limit=limit, **options)
    found = ranked(store_dir, cache_dir, query, limit=widened(limit, hidden), **options)
    kept = mark(
        found["results"],
        hidden,
        lambda result: result["citation"]["id"],
        include_superseded,
        "standing",
    )
    return {**found, "results": kept[:limit]}


def ranked(
    store_dir: Path,
    cache_dir: Path,
    query: str,
    *,
    limit: int = 5,
    domain: str | None = None,
    feature: str | None = None,
    style: str | None = None,
    at: str | None = None,
    provider: Any = None,
    progress: Any = None,
    tokenizer: Tokenizer | None = None,
    mode: str | None = None,
) -> dict[str, Any]:
    """Search a store: the fast path when it can answer, else the full path through git.

    This is what the CLI and MCP call, so that a search the index can answer never
    imports git or YAML machinery. With a provider (an object with ``kind`` and
    ``search``) or ``at``, :func:`xbrain.retrieval.operations.search` does the work;
    ``progress(done, total)`` hears about an index being built on the way. ``mode``:
    lexical, semantic or hybrid (None: hybrid when semantic recall is on here, else
    lexical; ``at``, a provider or design filters keep it lexical).
    """
    trimmed = validate_request(query, limit, domain, feature, style)
    if mode != "lexical":
        from ..semantic.hybrid import resolve_mode

        chosen = resolve_mode(store_dir / ".git", mode)
        if chosen != "lexical" and at is None and provider is None and trimmed:
            from ..semantic.hybrid import LEXICAL_DEPTH, fused_search

            wide = search_store(
                store_dir,
                cache_dir,
                query,
                limit=max(limit, LEXICAL_DEPTH),
                domain=domain,
                feature=feature,
                style=style,
                progress=progress,
                tokenizer=tokenizer,
                mode="lexical",
            )
            if domain or feature or style:  # design filters: the lexical leg alone
                return {**wide, "results": wide["results"][:limit], "retrieval": "lexical"}
            from ..semantic.hybrid import or_lexical

            def fused() -> dict[str, Any]:
                return fused_search(store_dir, cache_dir, trimmed, limit, chosen, wide)

            found, note = or_lexical(store_dir / ".git", mode, fused)  # the endpoint failing
            if found is not None:
                return found
            return {**wide, "results": wide["results"][:limit], **note}
    if at is None and provider is None:
        own = tokenizer is None  # a caller's tokenizer (recall) keeps its loaded segmenter
        words = Tokenizer(cache_dir) if tokenizer is None else tokenizer
        try:
            terms = words.query_terms(trimmed)
            if terms or domain or feature or style:
                fast = current(store_dir / ".git", words, terms, limit, domain, feature, style)
                if fast is not None:
                    return fast
        finally:
            if own:
                words.close()
    from ..core import Core
    from .operations import search

    core = Core(store_dir, cache_dir=cache_dir)
    return search(
        core,
        query,
        limit=limit,
        domain=domain,
        feature=feature,
        style=style,
        at=at,
        provider=provider,
        progress=progress,
    )
