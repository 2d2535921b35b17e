"""Team memory: the team group (add, list, remove, pull)."""

from __future__ import annotations

from pathlib import Path

import click

from ..lightcli import teams_dir
from .base import cache_dir, common_options, emit, quiet_network_libraries


def _root() -> Path:
    return Path(teams_dir())


@click.group()
def team() -> None:
    """Team stores read beside your own (add a team's git URL; share records to it).

    A team store is an xbrain store in its own git repository (a bare repository over
    ssh, a forge, git daemon). Search, recall, list, get and the hooks read every team
    added here as a layer ("layer": "team:NAME"); nothing of yours reaches a team
    without xbrain share.
    """
    quiet_network_libraries()


@team.command("add")
@click.argument("name")
@click.argument("url")
@common_options
def team_add(name: str, url: str) -> None:
    """Clone the team store at URL as team NAME (checked like any clone)."""
    from ..team.manage import add

    emit(add(_root(), name, url, cache_dir()))


@team.command("list")
@common_options
def team_list() -> None:
    """List the teams, their URL, commit and last sync."""
    from ..team.manage import list_teams

    emit(list_teams(_root()))


@team.command("remove")
@click.argument("name")
@common_options
def team_remove(name: str) -> None:
    """Remove team NAME's local copy (the team repository is untouched)."""
    from ..team.manage import remove

    emit(remove(_root(), name))


@team.command("pull")
@click.argument("name", required=False)
@common_options
@click.pass_context
def team_pull(ctx: click.Context, name: str | None) -> None:
    """Fetch team NAME (default: every team) and merge it into its local layer.

    Without NAME, a team that cannot be reached is listed under "failed" (exit 8)
    and the others are still pulled.
    """
    from ..team.manage import pull, pull_all

    if name is not None:
        emit(pull(_root(), name, cache_dir()))
        return
    result = pull_all(_root(), cache_dir())
    emit(result)
    if result["failed"]:
        ctx.exit(8)
