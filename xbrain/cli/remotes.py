"""Backups and other devices: the remote group and clone."""

from __future__ import annotations

from pathlib import Path

import click

from .base import (
    Progress,
    cache_dir,
    common_options,
    emit,
    open_store,
    quiet_network_libraries,
)


@click.group()
def remote() -> None:
    """Git remotes for backups and other devices (only ones you add; never implicit).

    URLs may be paths, file://, ssh://, git:// or https://; credentials come from your
    ssh agent or git credential helper, never from xbrain. A server that has not
    answered in full within XBRAIN_NETWORK_TIMEOUT seconds (120) is given up (exit 8).
    """
    quiet_network_libraries()


@remote.command("add")
@click.argument("name")
@click.argument("url")
@common_options
@click.pass_context
def remote_add(ctx: click.Context, name: str, url: str) -> None:
    """Add a remote NAME at URL."""
    emit(open_store(ctx).remote_add(name, url))


@remote.command("list")
@common_options
@click.pass_context
def remote_list(ctx: click.Context) -> None:
    """List the remotes."""
    emit(open_store(ctx).remote_list())


@remote.command("remove")
@click.argument("name")
@common_options
@click.pass_context
def remote_remove(ctx: click.Context, name: str) -> None:
    """Forget remote NAME (the remote itself is untouched)."""
    emit(open_store(ctx).remote_remove(name))


@remote.command("push")
@click.argument("name", default="origin")
@click.option(
    "--force-with-lease",
    is_flag=True,
    help="Replace the history xbrain purge removed on NAME, only if NAME still holds "
    "exactly what it held then.",
)
@common_options
@click.pass_context
def remote_push(ctx: click.Context, name: str, force_with_lease: bool) -> None:
    """Push main to NAME (default origin); refused when NAME has commits you lack."""
    emit(open_store(ctx).remote_push(name, force_with_lease=force_with_lease))


@remote.command("pull")
@click.argument("name", default="origin")
@common_options
@click.pass_context
def remote_pull(ctx: click.Context, name: str) -> None:
    """Fetch NAME and fast-forward, or merge per resource (newer wins; never conflict markers).

    Everything the remote sends is checked first (paths, file kinds, sizes, records);
    a refused remote changes nothing. "dropped" lists every id where the merge kept one
    device's revision over the other's (still in history: xbrain show / restore).
    """
    emit(open_store(ctx).remote_pull(name))


@remote.command("verify")
@click.argument("name", default="origin")
@common_options
@click.pass_context
def remote_verify(ctx: click.Context, name: str) -> None:
    """Clone NAME aside and check every object, record and the catalog."""
    result = open_store(ctx).remote_verify(name)
    emit(result)
    if not result["ok"]:
        ctx.exit(7)


@click.group()
def backup() -> None:
    """Back up the whole store into one file; xbrain clone FILE DIR restores it."""


@backup.command("create")
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--force", is_flag=True, help="Overwrite FILE if it exists.")
@common_options
@click.pass_context
def backup_create(ctx: click.Context, file: Path, force: bool) -> None:
    """Write main — every resource, skill, entry and their history — as a git bundle
    FILE (0600, private content). xbrain clone FILE DIR restores it, checked like any
    clone; git clone FILE reads it too.
    """
    emit(open_store(ctx).backup_create(file, force=force))


@click.command("clone")
@click.argument("url")
@click.argument("directory", type=click.Path(path_type=Path, file_okay=False))
@common_options
def clone_command(url: str, directory: Path) -> None:
    """Restore a store from URL into DIRECTORY (e.g. a backup on a new machine).

    URL may also be a bundle FILE made by xbrain backup create.
    """
    from ..store import clone

    quiet_network_libraries()
    progress = Progress("indexing")
    try:
        result = clone(url, directory, progress, cache_dir())
    finally:
        progress.finish()
    emit(result)
