"""Commands on resources: init, put, get, inspect, analyze, delete, list, adopt, config,
supersede."""

from __future__ import annotations

import click

from .base import (
    allow_secret_option,
    common_options,
    emit,
    emit_layered,
    open_store,
    read_input,
    store_path,
)


@click.command()
@common_options
@click.pass_context
def init(ctx: click.Context) -> None:
    """Create the store (a private git repository) if it does not exist."""
    emit(open_store(ctx).init())


@click.command()
@click.argument("file", metavar="FILE|-")
@click.option(
    "--supersedes",
    metavar="ID",
    multiple=True,
    help="A resource each one put supersedes (repeatable): kept, no longer searched.",
)
@click.option("--valid-from", metavar="TIME", help="Each holds from TIME (ISO 8601 or a date).")
@click.option("--valid-until", metavar="TIME", help="Each holds until TIME (ISO 8601 or a date).")
@allow_secret_option
@common_options
@click.pass_context
def put(
    ctx: click.Context,
    file: str,
    supersedes: tuple[str, ...],
    valid_from: str | None,
    valid_until: str | None,
) -> None:
    """Add or update resources from a JSON file (or - for stdin).

    FILE holds one complete resource or an array of 1–1,000 (at most 10 MiB). An update
    is a full replacement and needs a strictly newer updatedAt; unknown fields are
    dropped and counted in droppedFields. Unknown purpose/useWhen/limitations stay
    empty and an unknown savedReason stays null. Identity is source.provider plus
    source.id. Nothing is written unless the whole batch is valid.

    Facts that change (kept beside the resource, never in it): supersedes,
    validFrom and validUntil, as these options or as fields of each resource. A
    resource superseded by one in force, proposed, or outside its validity is not
    searched or recalled. A resource's "supersedes": [] removes its links and
    "validFrom"/"validUntil": null remove them. With --agent and `xbrain config
    review.agentWrites proposed`, new resources land proposed for `xbrain review`; a
    put without --agent of a proposed resource accepts it (status accepted). Each
    result lists possibleConflicts: resources in force that look like the same
    subject (none: []).
    """
    store = open_store(ctx)
    given: dict[str, object] = {}
    if supersedes:
        given["supersedes"] = list(supersedes)
    if valid_from is not None:
        given["validFrom"] = valid_from
    if valid_until is not None:
        given["validUntil"] = valid_until
    emit(store.put(read_input(file), given or None))


@click.command()
@click.argument("resource_id", metavar="ID")
@common_options
@click.pass_context
def get(ctx: click.Context, resource_id: str) -> None:
    """Print one resource. Prints private content to stdout.

    Not yours but a team's (xbrain team): {layer, trust, provenance, resource}.
    """
    from ..team.reads import get_resource

    emit_layered(
        lambda: open_store(ctx).get(resource_id),
        lambda teams: get_resource(teams, resource_id),
        store_path(ctx),
    )


@click.command()
@click.argument("resource_id", metavar="ID")
@common_options
@click.pass_context
def inspect(ctx: click.Context, resource_id: str) -> None:
    """Print a resource with its resourceRevision (needed by analyze). Private content."""
    emit(open_store(ctx).inspect(resource_id))


@click.command()
@click.argument("file", metavar="FILE|-")
@common_options
@click.pass_context
def analyze(ctx: click.Context, file: str) -> None:
    """Attach a visual design analysis: {id, resourceRevision, design} from FILE or -.

    resourceRevision must come from `xbrain inspect`; a changed resource is refused.
    """
    store = open_store(ctx)
    emit(store.analyze(read_input(file)))


@click.command()
@click.argument("resource_id", metavar="ID")
@common_options
@click.pass_context
def delete(ctx: click.Context, resource_id: str) -> None:
    """Delete a resource locally, leaving a tombstone.

    The tombstone stops capture and pull from resurrecting it; a later put restores it
    only with an updatedAt newer than the deletion. Remote copies stay until an explicit
    sync.
    """
    emit(open_store(ctx).delete(resource_id))


@click.command("list")
@click.option(
    "--limit", type=int, default=20, show_default=True, help="Resources to show, 1–1,000."
)
@click.option("--since", metavar="TIME", help="Only resources updated at or after TIME (ISO 8601).")
@click.option("--provider", metavar="P", help="Only resources whose source.provider is P.")
@click.option(
    "--offset",
    type=int,
    default=0,
    show_default=True,
    help="Skip the first N matches: the next page is --offset (previous offset + limit).",
)
@common_options
@click.pass_context
def list_command(
    ctx: click.Context, limit: int, since: str | None, provider: str | None, offset: int
) -> None:
    """Browse resources, newest updatedAt first, as brief records. Prints private content.

    Each item: id, title, purpose, useWhen, limitations, updatedAt and source
    {provider, url}; "total" counts every match. xbrain get ID shows one in full.
    """
    from ..lightcli import note_missing_store, teams_dir
    from ..team.reads import list_resources

    listed = open_store(ctx).list(limit=limit, since=since, provider=provider, offset=offset)
    emit(
        list_resources(
            teams_dir(), listed, limit=limit, since=since, provider=provider, offset=offset
        )
    )
    note_missing_store(str(store_path(ctx)))  # (as search does: an empty list, and why)


@click.command()
@allow_secret_option
@common_options
@click.pass_context
def adopt(ctx: click.Context) -> None:
    """Validate and commit hand edits of record files in the working tree.

    Valid files are committed in canonical form; invalid ones are listed under
    "rejected" (exit 1) and left untouched.
    """
    result = open_store(ctx).adopt()
    emit(result)
    if result["rejected"]:
        count = len(result["rejected"])
        click.echo(f'{count} file(s) rejected and left alone; see "rejected".', err=True)
        ctx.exit(1)


@click.command()
@click.argument("key", required=False)
@click.argument("value", required=False)
@common_options
@click.pass_context
def config(ctx: click.Context, key: str | None, value: str | None) -> None:
    """Show the store's settings, or set KEY to VALUE (one commit).

    \b
    Keys: identity.name, identity.email   the commit author (default xbrain)
          limits.maxEntries, limits.maxBytes  raise the store's limits
                               (at most 10000000 records, 1 TiB)
          recall.topK|threshold|maxDropoff|budget|scoring  recall's defaults
          projects.FOLDER ID   recall treats FOLDER (and below) as project ID;
                               an empty ID ("") drops the mapping
          projects             (no VALUE) list the folders recall has seen on
                               this device, their project ids and lastSeen
          telemetry on|off     recall telemetry on this device (not committed)
          sync.auto on|off     pull at session start and push after writes, in
                               the background (this device; not committed)
          team.reviewers LIST  a team store's reviewers: "Ann <a@x.org>, …"
    """
    if key == "sync.auto":
        from ..errors import UsageError
        from ..team.autosync import set_auto

        if value not in ("on", "off"):
            raise UsageError("xbrain config sync.auto on|off")
        emit(set_auto(store_path(ctx), value == "on"))
        return
    emit(open_store(ctx).config(key, value))


@click.command()
@click.argument("old", metavar="OLD")
@click.argument("new", metavar="NEW")
@common_options
@click.pass_context
def supersede(ctx: click.Context, old: str, new: str) -> None:
    """Record that resource (or entry) NEW supersedes OLD; OLD is kept, no longer recalled.

    Both must be live and of one kind. The link lives beside NEW (a resource's bytes
    never change); NEW holds from now unless it has a validFrom, so `recall --as-of`
    an earlier date still answers with OLD. A link that would make a cycle is refused.
    With --agent and `xbrain config review.agentWrites proposed`, NEW must be the
    agent's own proposal: one in force is refused (exit 5; propose a new record that
    supersedes OLD). A put of NEW with "supersedes": [] removes its links.
    """
    emit(open_store(ctx).supersede(old, new))
