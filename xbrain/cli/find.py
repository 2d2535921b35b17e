"""Commands that search: search (the fast path first) and reindex."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from .base import Progress, cache_dir, common_options, emit, open_store, store_path


@click.command()
@click.argument("query", metavar="QUERY")
@click.option("--limit", type=int, default=5, show_default=True, help="Results, 1–20.")
@click.option("--domain", help="Only analyzed designs in this domain (e.g. web-ui).")
@click.option("--feature", help="Only analyzed designs with a feature value/kind containing this.")
@click.option("--style", help="Only analyzed designs with a style label containing this.")
@click.option("--at", "at", metavar="REV", help="Search the store as it was at a commit.")
@click.option(
    "--provider-config",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Also ask this personal provider and merge its candidates (local wins).",
)
@click.option(
    "--brief",
    is_flag=True,
    help="Each result as {brief: id, title, purpose, useWhen, limitations, snippet} "
    "instead of the whole resource (a 300-character snippet around the first match).",
)
@common_options
@click.pass_context
def search(
    ctx: click.Context,
    query: str,
    limit: int,
    domain: str | None,
    feature: str | None,
    style: str | None,
    at: str | None,
    provider_config: Path | None,
    brief: bool,
) -> None:
    """Find resources for QUERY (English, Chinese or mixed). Prints private content.

    Results need a positive score and at least 35% of the query's terms; ranking is
    BM25F over title, purpose, useWhen and analyzed design labels (weight 1.25), summary
    (1.1) and text (1). QUERY may be "" when a design filter is given, or - to read it
    from stdin (UTF-8). Each result carries a citation {id, url, updatedAt}: cite the
    original URL.
    """
    from ..search import query as search_query
    from ..search.run import search_store

    progress = Progress("indexing")  # a first search after clone or import builds the index
    try:
        found = search_store(
            store_path(ctx),
            cache_dir(),
            search_query.read_query(sys.stdin.buffer) if query == "-" else query,
            limit=limit,
            domain=domain,
            feature=feature,
            style=style,
            at=at,
            provider=open_store(ctx).provider(provider_config) if provider_config else None,
            progress=progress,
        )
    finally:
        progress.finish()
    emit(search_query.brief(found) if brief else found)


@click.command()
@common_options
@click.pass_context
def reindex(ctx: click.Context) -> None:
    """Rebuild the search index from the committed resources (it is derived data)."""
    progress = Progress("reindex")
    try:
        result = open_store(ctx).reindex(progress)
    finally:
        progress.finish()
    emit(result)
