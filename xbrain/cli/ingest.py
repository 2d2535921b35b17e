"""Ingestion: capture, pull, pending, distill."""

from __future__ import annotations

from pathlib import Path

import click

from .base import Progress, allow_secret_option, common_options, emit, open_store, read_input


@click.command()
@click.option(
    "--bookmarks",
    "bookmarks",
    type=click.Path(path_type=Path, dir_okay=False),
    help="The gallery bookmark library (version 1 JSON); it is only read.",
)
@click.option("--skip-invalid", is_flag=True, help="Capture the valid rows; report the others.")
@allow_secret_option
@common_options
@click.pass_context
def capture(ctx: click.Context, bookmarks: Path | None, skip_invalid: bool) -> None:
    """Capture a bookmark library as provider-x resources (local only, no network).

    Existing distillation and titles are kept, text is refreshed (a change is flagged
    for review), deleted resources are not resurrected, and the library file is never
    written. A row that cannot become a resource fails the capture, unless
    --skip-invalid (then it is listed under "invalid" and the exit status is 1).
    """
    if bookmarks is None:
        raise click.UsageError(
            "Capture requires --bookmarks FILE; no library is selected automatically."
        )
    store = open_store(ctx)
    progress = Progress("capture")
    try:
        result = store.capture(bookmarks, skip_invalid=skip_invalid, progress=progress)
    finally:
        progress.finish()
    emit(result)
    if result.get("invalid"):
        ctx.exit(1)


@click.command()
@click.option(
    "--source-config",
    type=click.Path(path_type=Path, dir_okay=False),
    help="The authorized source adapter config (kind command, scope personal).",
)
@click.option("--max-pages", type=int, default=10, show_default=True, help="Page budget, 1–100.")
@click.option(
    "--restart", is_flag=True, help="Drop an unfinished cursor (keeps data and the checkpoint)."
)
@allow_secret_option
@common_options
@click.pass_context
def pull(ctx: click.Context, source_config: Path | None, max_pages: int, restart: bool) -> None:
    """Pull new or changed items page by page from a source adapter you chose.

    Each page is one commit; a failed or paused pull resumes from its stored cursor
    when run again. Changed resources join the distillation queue (see pending).
    Exits 1 when the pull failed; the JSON result is printed either way.
    """
    if source_config is None:
        raise click.UsageError("Select an authorized source adapter with --source-config.")
    store = open_store(ctx)
    progress = Progress("pull")
    try:
        result = store.pull(source_config, max_pages=max_pages, restart=restart, progress=progress)
    finally:
        progress.finish()
    emit(result)
    if result["state"] == "failed":
        ctx.exit(1)


@click.command()
@click.option("--limit", type=int, default=20, show_default=True, help="Items to show, 1–100.")
@common_options
@click.pass_context
def pending(ctx: click.Context, limit: int) -> None:
    """Resources waiting for distillation, with the revisions distill needs. Private content."""
    emit(open_store(ctx).pending(limit))


@click.command()
@click.argument("file", metavar="FILE|-")
@allow_secret_option
@common_options
@click.pass_context
def distill(ctx: click.Context, file: str) -> None:
    """Apply distillations: {id, sourceRevision, resourceRevision, summary, purpose,
    useWhen, limitations} (or an array of 1–100) from FILE or -.

    The revisions come from `xbrain pending`; a resource that changed since is refused.
    savedReason, title, text and source cannot be changed this way.
    """
    store = open_store(ctx)
    emit(store.distill(read_input(file)))
