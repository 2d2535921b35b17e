"""The ``review`` group: the queue of proposed entries, and accept, reject, edit."""

from __future__ import annotations

import click

from .base import common_options, emit, open_store


@click.group(invoke_without_command=True)
@common_options
@click.pass_context
def review(ctx: click.Context) -> None:
    """The review queue: proposed entries and resources, to accept, reject or edit.

    An entry or resource that comes in through an agent (MCP; the CLI with --agent
    when `xbrain config review.agentWrites proposed`) lands proposed: kept, listed
    here, never recalled or searched until accepted. Without a subcommand, lists the
    queue as {count, proposals: [{id, kind, name, scope, updatedAt, proposedBy:
    {agent, session}, possibleConflicts: [{id, name, why}]}]} (a resource: kind
    "resource", its title as name, no scope). Prints private content.
    """
    if ctx.invoked_subcommand is None:
        emit(open_store(ctx).review_list())


@review.command("accept")
@click.argument("ids", metavar="ID...", nargs=-1, required=True)
@common_options
@click.pass_context
def accept(ctx: click.Context, ids: tuple[str, ...]) -> None:
    """Make proposed entries and resources active (one commit; all or none)."""
    emit(open_store(ctx).review_accept(list(ids)))


@review.command("reject")
@click.argument("ids", metavar="ID...", nargs=-1, required=True)
@click.option("--reason", required=True, help="Why (kept in the tombstone; one line).")
@common_options
@click.pass_context
def reject(ctx: click.Context, ids: tuple[str, ...], reason: str) -> None:
    """Reject proposed entries and resources: each becomes a tombstone; the reason
    is kept (a resource's in its facts file)."""
    emit(open_store(ctx).review_reject(list(ids), reason))


@review.command("edit")
@click.argument("entry_id", metavar="ID")
@common_options
@click.pass_context
def edit(ctx: click.Context, entry_id: str) -> None:
    """Edit a proposed entry or resource in $EDITOR (as YAML), then accept it.

    Its id stays (an entry's scope and name, a resource's source provider and id); an
    editor that leaves the text unchanged or empty changes nothing.
    """
    from ..codec import dump_yaml
    from ..entries import parse_input

    store = open_store(ctx)
    found = store.review_item(entry_id)
    text = dump_yaml(found).decode("utf-8")
    edited = click.edit(text, extension=".yaml", require_save=True)
    if edited is None or not edited.strip():
        emit({"accepted": [], "commit": None})
        return
    emit(store.review_edit(entry_id, parse_input(edited.encode("utf-8"), "edited.yaml")))
