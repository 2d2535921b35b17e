"""History commands: log, show, diff, restore."""

from __future__ import annotations

import click

from .base import allow_secret_option, common_options, emit, open_store


@click.command()
@click.argument("resource_id", metavar="[ID]", required=False)
@click.option("--limit", type=int, default=20, show_default=True, help="Commits to list, 1–1,000.")
@common_options
@click.pass_context
def log(ctx: click.Context, resource_id: str | None, limit: int) -> None:
    """Commits of the store (or of one resource or entry), newest first: who changed what, when."""
    emit(open_store(ctx).log(resource_id, limit))


@click.command()
@click.argument("resource_id", metavar="ID")
@click.option("--at", "at", metavar="REV", required=True, help="A commit id (or prefix), main~N.")
@common_options
@click.pass_context
def show(ctx: click.Context, resource_id: str, at: str) -> None:
    """A resource or an entry as it was at a revision. Prints private content."""
    emit(open_store(ctx).show(resource_id, at))


@click.command()
@click.argument("resource_id", metavar="ID")
@click.argument("revisions", metavar="[REV [REV]]", nargs=-1)
@common_options
@click.pass_context
def diff(ctx: click.Context, resource_id: str, revisions: tuple[str, ...]) -> None:
    """Field-level and line-level changes of a resource or an entry between revisions.

    No REV: its last change. One REV: from REV to now. Two: from the first to the second.
    """
    if len(revisions) > 2:
        raise click.UsageError("Give at most two revisions.")
    old = revisions[0] if revisions else None
    new = revisions[1] if len(revisions) == 2 else None
    if old is not None and new is None:
        new = "main"
    emit(open_store(ctx).diff(resource_id, old, new))


@click.command()
@click.argument("resource_id", metavar="ID")
@click.option("--at", "at", metavar="REV", required=True, help="The revision to bring back.")
@allow_secret_option
@common_options
@click.pass_context
def restore(ctx: click.Context, resource_id: str, at: str) -> None:
    """Write a resource's or an entry's content from a past revision as a new revision.

    History is never rewritten; a deleted one comes back the same way.
    """
    emit(open_store(ctx).restore(resource_id, at))
