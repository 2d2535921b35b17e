"""``xbrain ui``: the local web viewer (its modules load only here)."""

from __future__ import annotations

import click

from .base import common_options, emit, open_store


@click.command("ui")
@click.option("--port", type=int, default=0, help="Port on 127.0.0.1 [default: any free port].")
@click.option("--open", "open_browser", is_flag=True, help="Open the URL in your browser.")
@click.option(
    "--idle",
    type=float,
    default=1800.0,
    show_default=True,
    metavar="SECONDS",
    help="Exit after this long without a request.",
)
@common_options
@click.pass_context
def ui(ctx: click.Context, port: int, open_browser: bool, idle: float) -> None:
    """Browse the store in a local web page (needs: pip install 'xbrain[ui]').

    Serves 127.0.0.1 only and prints the page's URL, which holds a random token of
    this run: requests without it, with another Host or from another site are refused,
    and every change needs the page's own CSRF token. Search (as recall and search),
    records with their history and side-by-side diffs, skills, entries, the review
    queue, telemetry and store health; retire or activate an entry, publish, deprecate
    or archive a skill, delete a resource (each one commit, agent ui). Stops on Ctrl-C
    or after --idle seconds without a request. Prints private content.
    """
    from ..ui import serve
    from .base import Settings

    settings = ctx.ensure_object(Settings)
    if settings.agent is None:  # the viewer's commits say so (Xbrain-Agent: ui)
        settings.agent = "ui"
    store = open_store(ctx)

    def ready(url: str) -> None:
        click.echo(url)
        click.echo("xbrain ui: open the URL above; Ctrl-C stops it.", err=True)

    emit(serve(store, port=port, idle=idle, ready=ready, open_browser=open_browser))
