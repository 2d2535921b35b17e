"""The ``entry`` group: put, get, list, delete, retire, activate, supersede, import, export."""

from __future__ import annotations

from pathlib import Path

import click

from ..lightcli import stdin_stream
from .base import (
    allow_secret_option,
    common_options,
    emit,
    emit_layered,
    open_store,
    store_path,
)


@click.group()
def entry() -> None:
    """Rules and memories routed into an agent's context when a prompt needs them.

    An entry is a rule, memory, workflow, tool-guidance, session-learning or stop-rule
    with a name, description, body, one-liner, queries and keywords (what a prompt that
    needs it looks like). Its id comes from its scope and name. Entries are private
    content; writes follow the resource rules (a newer updatedAt to update; the same
    content again is unchanged; delete leaves a tombstone).
    """


@entry.command("put")
@click.argument("file", metavar="FILE|-")
@allow_secret_option
@common_options
@click.pass_context
def put(ctx: click.Context, file: str) -> None:
    """Add or update entries: JSON (one or a list), YAML, or Markdown with frontmatter.

    Markdown uses memex's keys: name, description, type (the kind), queries, keywords,
    paths, hooks, one-liner, boost, status; the body follows the frontmatter. Without
    updatedAt an entry takes the current time and is unchanged when nothing else
    differs. Unknown fields are dropped and listed per result. supersedes (entry ids),
    validFrom and validUntil (ISO 8601) say which facts it replaces and when it holds.
    Each result lists possibleConflicts: active entries of the same scope and kind that
    look like the same subject (unchanged; supersede them if so). With --agent, entries
    land proposed for `xbrain review` when `xbrain config review.agentWrites proposed`.
    """
    from ..entries import parse_input
    from ..inputs import MAX_INPUT, read_file

    if file == "-":
        data = stdin_stream().read(MAX_INPUT + 1)
        if len(data) > MAX_INPUT:
            from ..errors import InvalidInputError

            raise InvalidInputError("Input exceeds 10 MiB.")
    else:
        data = read_file(Path(file), MAX_INPUT, "Input exceeds 10 MiB.")
    emit(open_store(ctx).entry_put(parse_input(data, file)))


@entry.command("get")
@click.argument("entry_id", metavar="ID")
@common_options
@click.pass_context
def get(ctx: click.Context, entry_id: str) -> None:
    """Print one entry. Prints private content.

    Not yours but a team's (xbrain team): {layer, trust, provenance, entry}.
    """
    from ..team.reads import get_entry

    emit_layered(
        lambda: open_store(ctx).entry_get(entry_id),
        lambda teams: get_entry(teams, entry_id),
        store_path(ctx),
    )


@entry.command("list")
@click.option("--kind", "kind_filter", help="Only this kind (rule, memory, workflow, …).")
@click.option(
    "--status", type=click.Choice(["active", "retired", "proposed"]), help="Only this status."
)
@common_options
@click.pass_context
def list_command(ctx: click.Context, kind_filter: str | None, status: str | None) -> None:
    """Entries as brief records, by kind, scope and name. Prints private content.

    With team layers (xbrain team) their accepted entries too, each with its layer.
    """
    from ..lightcli import note_missing_store, teams_dir
    from ..team.reads import list_entries

    emit(
        list_entries(
            teams_dir(), open_store(ctx).entry_list(kind_filter, status), kind_filter, status
        )
    )
    note_missing_store(str(store_path(ctx)))  # (as search does: an empty list, and why)


@entry.command("delete")
@click.argument("entry_id", metavar="ID")
@common_options
@click.pass_context
def delete(ctx: click.Context, entry_id: str) -> None:
    """Delete an entry, leaving a tombstone (an import does not bring it back)."""
    emit(open_store(ctx).entry_delete(entry_id))


@entry.command("retire")
@click.argument("entry_id", metavar="ID")
@common_options
@click.pass_context
def retire(ctx: click.Context, entry_id: str) -> None:
    """Retire an entry: kept and readable, never recalled unless asked."""
    emit(open_store(ctx).entry_status(entry_id, "retired"))


@entry.command("activate")
@click.argument("entry_id", metavar="ID")
@common_options
@click.pass_context
def activate(ctx: click.Context, entry_id: str) -> None:
    """Make a retired entry active again."""
    emit(open_store(ctx).entry_status(entry_id, "active"))


@entry.command("supersede")
@click.argument("old", metavar="OLD")
@click.argument("new", metavar="NEW")
@common_options
@click.pass_context
def supersede(ctx: click.Context, old: str, new: str) -> None:
    """Record that entry NEW supersedes entry OLD (from now on; NEW's validFrom).

    OLD is kept but no longer recalled while NEW is active; `recall --as-of` a date
    before NEW's validFrom still answers with OLD, and --include-superseded shows it,
    marked. show and log name the link both ways. With --agent and `xbrain config
    review.agentWrites proposed`, NEW must be the agent's own proposal (one in force:
    exit 5; propose a new entry with supersedes: [OLD]).
    """
    emit(open_store(ctx).entry_supersede(old, new))


@entry.command("import")
@click.argument("folder", metavar="DIR", type=click.Path(path_type=Path, file_okay=False))
@click.option("--scope", help="Scope for entries that do not name one (default: global).")
@click.option(
    "--prune",
    is_flag=True,
    help="Delete (tombstone) the entries of this scope imported from a file the folder no "
    "longer has (without it they are only listed under missing).",
)
@allow_secret_option
@common_options
@click.pass_context
def import_command(ctx: click.Context, folder: Path, scope: str | None, prune: bool) -> None:
    """Import a memex-style folder: rules/, memory/ and skills/.

    A file with frontmatter is one entry; a memory file without it is one entry per
    '## ' section (named '<file>#<title>'); a Markdown file directly in skills/ is a
    workflow entry. Each skills/<name>/ folder with a SKILL.md is saved as a skill (its
    other files are its components, lands as proposed). Links are refused, nothing
    outside the three folders is read. Entries deleted here are not brought back. The
    entries are one commit, each skill one more.
    """
    emit(open_store(ctx).entry_import(folder, scope, prune=prune))


@entry.command("export")
@click.argument("folder", metavar="DIR", type=click.Path(path_type=Path, file_okay=False))
@common_options
@click.pass_context
def export(ctx: click.Context, folder: Path) -> None:
    """Write every entry into DIR (new or empty) as memex-style Markdown (files 0600).

    An imported entry that has not changed goes back byte for byte to the file it came
    from; the others are rendered with frontmatter, and the result imports back to the
    same entries.
    """
    emit(open_store(ctx).entry_export(folder))
