"""``xbrain project``: link published skills and always-on rules into an agent's folders."""

from __future__ import annotations

import click

from .base import common_options, emit, open_store


@click.command("project")
@click.option(
    "--target",
    required=True,
    metavar="DIR|claude-code",
    help="The agent's folder (claude-code: ~/.claude); skills/ and rules/ go under it.",
)
@click.option("--dry-run", is_flag=True, help="Report what would change; touch nothing.")
@common_options
@click.pass_context
def project(ctx: click.Context, target: str, dry_run: bool) -> None:
    """Link published skills and always-on rules into an agent's folders.

    Absolute symbolic links into the store: skills/<slug> → the published revision's
    files, rules/<name>.md → the rule rendered as Markdown. A real file, a real folder
    or a link xbrain did not make is never replaced (reported as a conflict); xbrain's
    own links are re-pointed or removed as the store changes. Running it again changes
    nothing.
    """
    emit(open_store(ctx).project(target, dry_run=dry_run))
