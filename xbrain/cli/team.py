"""Team memory: the team group (add, list, remove, pull)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ..lightcli import teams_dir
from .base import cache_dir, common_options, emit, open_store, quiet_network_libraries


def _root() -> Path:
    return Path(teams_dir())


def _failed(ctx: click.Context, verb: str, failed: list[dict[str, str]]) -> None:
    """Teams that could not be reached or taken: one line on stderr, exit 8."""
    from ..errors import one_line

    if failed:
        said = "; ".join(f"{f['team']}: {f['error']}" for f in failed)
        click.echo(one_line(f"Could not {verb} {len(failed)} team(s): {said}"), err=True)
        ctx.exit(8)


def _unpushed(ctx: click.Context, name: str, result: dict[str, Any]) -> None:
    """A share or review committed in the team's clone but not pushed: its JSON said so
    (``pushed: false``, ``error``, ``note``); one line on stderr, exit 8 (as team sync)."""
    from ..errors import one_line

    if result.get("pushed") is False and not result.get("unchanged"):
        said = f"Could not push to team {name}: {str(result.get('error', '')).rstrip('.')}. "
        click.echo(one_line(said + str(result.get("note", ""))), err=True)
        ctx.exit(8)


def _who(ctx: click.Context) -> str | None:
    """The member's identity (their personal store's), for the merges a pull makes."""
    from ..errors import XbrainError
    from ..team.share import identity_of

    try:
        return identity_of(open_store(ctx))
    except XbrainError:
        return None


@click.group()
def team() -> None:
    """Team stores read beside your own (add a team's git URL; share records to it).

    A team store is an xbrain store in its own git repository (a bare repository over
    ssh, a forge, git daemon). Search, recall, skill recall, list, get, entry get,
    entry list, the hooks and the MCP read tools read every team added here as a layer
    ("layer": "team:NAME"); nothing of yours reaches a team without xbrain share.
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

    who = _who(ctx)
    if name is not None:
        emit(pull(_root(), name, cache_dir(), who))
        return
    result = pull_all(_root(), cache_dir(), who)
    emit(result)
    _failed(ctx, "pull", result["failed"])


@team.command("sync")
@click.argument("name", required=False)
@common_options
@click.pass_context
def team_sync(ctx: click.Context, name: str | None) -> None:
    """Pull, then push, team NAME (default: every team): what your shares and reviews
    committed while the team could not be reached goes out now.

    A team that cannot be reached is listed under "failed" (exit 8).
    """
    from ..team.manage import sync

    result = sync(_root(), cache_dir(), name, _who(ctx))
    emit(result)
    _failed(ctx, "sync", result["failed"])


@team.command("review")
@click.argument("name")
@click.argument("verb", required=False, type=click.Choice(["accept", "reject"]))
@click.argument("keys", metavar="[KEY]...", nargs=-1)
@click.option("--reason", help="Why a reject (kept in the proposal; one line).")
@common_options
@click.pass_context
def team_review(
    ctx: click.Context, name: str, verb: str | None, keys: tuple[str, ...], reason: str | None
) -> None:
    """List team NAME's proposals, or accept or reject some (KEY: a proposal's key,
    record id or skill slug; also a record committed to the team by someone not a
    reviewer, listed under "untrusted") as a reviewer of the team.

    Both pull the team first (one that cannot be reached: the list is its last pull,
    and says so). Each is listed with its title and description, hidden characters
    marked (<U+202E>); one whose title, name or description holds such a character
    cannot be accepted (exit 4).

    Reviewers are commit identities named in the team store's team.reviewers (set
    there with xbrain config team.reviewers "Ann <ann@example.org>, …"). A decision is
    committed with your identity and pushed. Both pull the team first: a pull the
    team's commits make refuse exits with the refusal's code, nothing decided. A push
    that fails (refused, or the team unreachable) exits 8: "pushed": false with the
    error and a note, one line on stderr; the decision is kept for the next team sync.
    """
    from ..errors import UsageError
    from ..team.review import decide, listing

    if verb is None:
        if keys or reason is not None:
            raise UsageError("xbrain team review NAME [accept|reject KEY... [--reason R]]")
        quiet_network_libraries()
        emit(listing(_root(), name, cache_dir(), _who(ctx), fetch=True))
        return
    if not keys:
        raise UsageError(f"Give the proposal to {verb}: xbrain team review {name} {verb} KEY")
    if reason is not None and verb != "reject":
        raise UsageError("--reason goes with reject.")
    result = decide(open_store(ctx), _root(), name, verb, list(keys), cache_dir(), reason)
    emit(result)
    _unpushed(ctx, name, result)


@click.command("share")
@click.argument("what", metavar="ID|SLUG")
@click.option("--team", "name", required=True, help="The team to propose it to.")
@click.option("--revision", metavar="R", help="A skill's revision [published, else head].")
@common_options
@click.pass_context
def share_command(ctx: click.Context, what: str, name: str, revision: str | None) -> None:
    """Propose one resource, entry or skill revision of yours to team NAME.

    It is copied into the team store as "proposed", committed with your identity
    (xbrain config identity.name / identity.email) and pushed; the team reads it once
    a reviewer accepts it. Nothing else of yours reaches the team. The team is pulled
    first: a pull the team's commits make refuse exits with the refusal's code, nothing
    shared. A push that fails (refused, or the team unreachable) exits 8: "pushed":
    false with the error and a note, one line on stderr; the share is kept for the next
    team sync.
    Sharing what the team already accepted, unchanged, does nothing ("unchanged");
    a changed version of an accepted record is refused (exit 5) unless you are a
    reviewer of the team (it is then proposed again, for you to accept).
    """
    from ..team.share import share

    quiet_network_libraries()
    result = share(open_store(ctx), _root(), name, what, revision=revision, cache_dir=cache_dir())
    emit(result)
    _unpushed(ctx, name, result)
