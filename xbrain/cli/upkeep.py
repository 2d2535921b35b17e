"""Store upkeep and providers: status, sync, doctor, import-store, export-store."""

from __future__ import annotations

from pathlib import Path

import click

from .base import Progress, allow_secret_option, common_options, emit, open_store

PROVIDER_OPTION = click.option(
    "--provider-config",
    type=click.Path(path_type=Path, dir_okay=False),
    help="A personal provider config (kind file or command); see README.",
)


@click.command()
@PROVIDER_OPTION
@common_options
@click.pass_context
def status(ctx: click.Context, provider_config: Path | None) -> None:
    """Which store, whether it exists, counts of resources, tombstones and pending work.

    With --provider-config, also the sync state with that provider.
    """
    from ..lightcli import teams_dir
    from ..team.autosync import report

    store = open_store(ctx)
    provider = store.provider(provider_config) if provider_config else None
    emit({**store.status(provider), "sync": report(store.path, teams_dir())})


@click.command()
@click.option("--id", "rid", metavar="ID", help="Send one resource (or its deletion).")
@click.option("--all", "everything", is_flag=True, help="Send everything not yet confirmed.")
@PROVIDER_OPTION
@allow_secret_option
@common_options
@click.pass_context
def sync(
    ctx: click.Context, rid: str | None, everything: bool, provider_config: Path | None
) -> None:
    """Send resources and deletions to a personal provider you chose explicitly.

    Only a provider's confirmation records a receipt (committed in receipts/); entries
    already confirmed are skipped, resources queued for distillation are held back, and
    failures are listed while the rest continue. Exits 1 when anything failed or was
    held back; the JSON result is printed either way.
    """
    store = open_store(ctx)
    provider = store.provider(provider_config) if provider_config else None
    result = store.sync(provider, rid=rid, everything=everything)
    emit(result)
    if result["failures"] or result["skippedPending"]:
        ctx.exit(1)


@click.command()
@click.option("--repair", is_flag=True, help="Fix what can be fixed safely (takes the lock).")
@common_options
@click.pass_context
def doctor(ctx: click.Context, repair: bool) -> None:
    """Check records, catalog, working tree, permissions and git objects.

    Derived data is checked too: a damaged search index, telemetry database or vector
    file is reported, and --repair removes it (the next use rebuilds it). A search index
    another xbrain version wrote is not damage (the next search rebuilds it); --repair
    rebuilds it at once.
    """
    result = open_store(ctx).doctor(repair=repair)
    emit(result)
    if not result["ok"]:
        ctx.exit(7)


@click.command()
@common_options
@click.pass_context
def gc(ctx: click.Context) -> None:
    """Consolidate the store's git objects into one pack, with deltas (takes the lock).

    Each write already merges small packs as they pile up; this merges everything,
    larger packs and loose objects too, and prints the packs and loose objects before
    and after. Nothing is dropped, and a running reader never misses an object; a
    git gc run by hand stays safe too.
    """
    emit(open_store(ctx).gc())


@click.command("import-store")
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False))
@allow_secret_option
@common_options
@click.pass_context
def import_store(ctx: click.Context, file: Path) -> None:
    """Import an original single-file JSON store (version 1) into an empty store."""
    progress = Progress("indexing")
    try:
        result = open_store(ctx).import_store(file, progress)
    finally:
        progress.finish()
    emit(result)


@click.command("export-store")
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--force", is_flag=True, help="Overwrite FILE if it exists.")
@common_options
@click.pass_context
def export_store(ctx: click.Context, file: Path, force: bool) -> None:
    """Write the store as an original single-file JSON store (private content, 0600).

    The original format holds resources and their tombstones only: skills and entries
    are left out (counted in "omitted"); back up the whole store with xbrain backup
    create FILE.
    """
    result = open_store(ctx).export_store(file, force=force)
    emit(result)
    left = [_counted(count, kind) for kind, count in result["omitted"].items() if count]
    if left:
        counts = ", ".join(left)
        click.echo(
            f"Left out {counts}: the original format holds only resources and tombstones; "
            "back up everything with xbrain backup create FILE.",
            err=True,
        )


_NAMES = {
    "skills": ("skill", "skills"),
    "entries": ("entry", "entries"),
    "entryTombstones": ("entry tombstone", "entry tombstones"),
}


def _counted(count: int, kind: str) -> str:
    one, many = _NAMES.get(kind, (kind, kind))
    return f"{count} {one if count == 1 else many}"


@click.command()
@click.argument("ids", nargs=-1, metavar="[ID]...")
@click.option("--text", "texts", multiple=True, metavar="STRING", help="Purge every occurrence.")
@click.option("--yes", is_flag=True, help="Rewrite the history (without it: a dry run).")
@common_options
@click.pass_context
def purge(ctx: click.Context, ids: tuple[str, ...], texts: tuple[str, ...], yes: bool) -> None:
    """Remove records (by ID) or every occurrence of a string from the whole history.

    Every commit is rewritten (messages and trailers kept, the string replaced by
    (purged)), the old objects deleted and the indexes rebuilt; .git/xbrain/purge.log
    records what was purged, never the string. Remotes that still hold the old history
    are listed; their tracking refs are dropped. Without --yes nothing changes.
    """
    emit(open_store(ctx).purge(list(ids), list(texts), apply=yes))
