"""The ``review`` group: the queue of proposed entries, and accept, reject, edit."""

from __future__ import annotations

import click

from .base import common_options, emit, open_store


@click.group(invoke_without_command=True)
@common_options
@click.pass_context
def review(ctx: click.Context) -> None:
    """The review queue: proposed entries, to accept, reject or edit.

    An entry that comes in through an agent (MCP; the CLI with --agent when
    `xbrain config review.agentWrites proposed`) lands proposed: kept, listed here,
    never recalled until accepted. Without a subcommand, lists the queue as {count,
    proposals: [{id, kind, name, scope, updatedAt, proposedBy: {agent, session},
    possibleConflicts: [{id, name, why}]}]}. Prints private content.
    """
    if ctx.invoked_subcommand is None:
        emit(open_store(ctx).review_list())


@review.command("accept")
@click.argument("ids", metavar="ID...", nargs=-1, required=True)
@common_options
@click.pass_context
def accept(ctx: click.Context, ids: tuple[str, ...]) -> None:
    """Make proposed entries active (one commit; all of them or none)."""
    emit(open_store(ctx).review_accept(list(ids)))


@review.command("reject")
@click.argument("ids", metavar="ID...", nargs=-1, required=True)
@click.option("--reason", required=True, help="Why (kept in the tombstone; one line).")
@common_options
@click.pass_context
def reject(ctx: click.Context, ids: tuple[str, ...], reason: str) -> None:
    """Reject proposed entries: each becomes a tombstone that keeps the reason."""
    emit(open_store(ctx).review_reject(list(ids), reason))


@review.command("edit")
@click.argument("entry_id", metavar="ID")
@common_options
@click.pass_context
def edit(ctx: click.Context, entry_id: str) -> None:
    """Edit a proposed entry in $EDITOR (as YAML), then accept it.

    Its scope and name stay (they make its id); an editor that leaves the text
    unchanged or empty changes nothing.
    """
    from ..codec import dump_yaml
    from ..entries import parse_input
    from ..errors import InvalidInputError

    store = open_store(ctx)
    found = store.entry_get(entry_id)
    if found["status"] != "proposed":
        raise InvalidInputError(f"Entry {entry_id} is not proposed (it is {found['status']}).")
    text = dump_yaml(found).decode("utf-8")
    edited = click.edit(text, extension=".yaml", require_save=True)
    if edited is None or not edited.strip():
        emit({"accepted": [], "commit": None})
        return
    emit(store.review_edit(entry_id, parse_input(edited.encode("utf-8"), "edited.yaml")))
