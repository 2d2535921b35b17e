"""The ``skill`` group: save, import, list, recall, log, diff, lifecycle, export."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import click

from ..errors import NotFoundError, UsageError
from ..lightcli import stdin_stream
from .base import allow_secret_option, cache_dir, common_options, emit, open_store, store_path

# what `skill import` takes for a git URL rather than a path: a scheme, or scp-like
# user@host:path (a local path that exists always wins)
_URL = re.compile(r"[a-z][a-z0-9+.-]*://|[^/\s]+@[^/\s:]+:", re.IGNORECASE)


@click.group()
def skill() -> None:
    """Procedures, runbooks and prompts in the Agent Skills format, with immutable revisions.

    Saving never overwrites: every change appends an immutable revision. A revision is
    draft, proposed, published or deprecated (one published per skill); a skill is
    active or archived. Recall is progressive: Level 0 ranks descriptors (`recall
    QUERY`), Level 1 gives one revision's instructions and file list (`recall --slug
    S`), Level 2 one file of exactly that revision (`--slug S --revision R --resource
    PATH`). Skills are private content.
    """


def _source(value: str) -> Path | Any:
    return stdin_stream() if value == "-" else Path(value)


@skill.command("save")
@click.argument("source", metavar="DIR|FILE|-")
@click.option("--publish", is_flag=True, help="Publish the new revision at once.")
@click.option(
    "--expect-revision",
    metavar="R",
    help="Refuse (exit 5, nothing written) unless the skill's head is still revision R "
    "(its id, or its number).",
)
@allow_secret_option
@common_options
@click.pass_context
def save(ctx: click.Context, source: str, publish: bool, expect_revision: str | None) -> None:
    """Save a skill: a directory with SKILL.md, a SKILL.md, a ZIP, or - (stdin).

    SKILL.md needs frontmatter with name (the slug: a-z, 0-9, '-') and description;
    other keys than name, description, license, compatibility, metadata and
    allowed-tools are refused. Content identical to the head revision changes nothing.
    A new revision is a draft unless --publish.
    """
    emit(open_store(ctx).skill_save(_source(source), publish=publish, expect=expect_revision))


@skill.command("import")
@click.argument("source", metavar="DIR|FILE|ZIP|GIT-URL")
@click.option("--ref", help="Branch, tag or full commit id of a git URL (default: its HEAD).")
@click.option("--path", "subdir", metavar="PATH", help="Directory of the skill in a git URL.")
@allow_secret_option
@common_options
@click.pass_context
def import_command(ctx: click.Context, source: str, ref: str | None, subdir: str | None) -> None:
    """Import a skill made elsewhere; it lands as proposed (publish it explicitly).

    ZIPs are read in memory, never extracted, and refused whole (exit 4) on any unsafe
    member. Git URLs (paths, file://, git://, ssh://, https://) are fetched with dulwich
    (given up after XBRAIN_NETWORK_TIMEOUT seconds, 120) and the commit is recorded.
    Unknown frontmatter keys are warnings here.
    """
    store = open_store(ctx)
    local = source == "-" or Path(source).exists() or Path(source).is_symlink()
    if ref or subdir or not local:  # --ref/--path make even a local path a repository
        if not local and not _URL.match(source):
            raise NotFoundError(f"No such file or directory: {source}")
        emit(store.skill_import(source, ref=ref, path=subdir))
        return
    emit(store.skill_import(_source(source)))


@skill.command("list")
@common_options
@click.pass_context
def list_command(ctx: click.Context) -> None:
    """Every skill: slug, description, status, published and head revisions."""
    emit(open_store(ctx).skill_list())


@skill.command("recall")
@click.argument("query", required=False)
@click.option("--slug", help="Level 1: this skill's instructions and file list.")
@click.option("--revision", metavar="R", help="The revision (id or number) to read.")
@click.option("--resource", metavar="PATH", help="Level 2: one file of --revision.")
@click.option("--limit", type=int, default=5, show_default=True, help="Level 0 results, 1-50.")
@common_options
@click.pass_context
def recall(
    ctx: click.Context,
    query: str | None,
    slug: str | None,
    revision: str | None,
    resource: str | None,
    limit: int,
) -> None:
    """Recall skills progressively. Prints private content.

    \b
    Level 0: recall QUERY|-            ranked {slug, name, description, published, score}
    Level 1: recall --slug S           the published revision (else the latest that is
                                       not proposed, marked "fallback": "latest"):
                                       instructions, files, revision_id
    Level 2: recall --slug S --revision R --resource PATH
                                       one file of exactly revision R
    """
    if slug is None:
        if query is None or revision or resource:
            raise UsageError("Give QUERY (Level 0), or --slug (Levels 1 and 2).")
        from ..search.query import read_query

        text = read_query(stdin_stream()) if query == "-" else query
        ctx.exit(_level0(store_path(ctx), text, limit))
    if query is not None:
        raise UsageError("Give either QUERY or --slug, not both.")
    from ..search import skills as indexed

    # the index answers the revision recall shows without git; anything else reads git
    try:
        if resource is None:
            fast = indexed.level1(store_path(ctx), slug) if revision is None else None
            emit(fast if fast is not None else open_store(ctx).skill_show(slug, revision))
        else:
            fast = (
                indexed.component(store_path(ctx), slug, revision, resource) if revision else None
            )
            emit(
                fast
                if fast is not None
                else open_store(ctx).skill_component(slug, revision, resource)
            )
    except NotFoundError:  # no such skill of yours: a team's published one, if any
        team = _team_skill(slug, revision, resource)
        if team is None:
            raise
        emit(team)


def _team_skill(slug: str, revision: str | None, resource: str | None) -> dict[str, Any] | None:
    """Level 1 or 2 of a team's published skill (only its published revision)."""
    from ..lightcli import teams_dir
    from ..team.reads import published_skill

    return published_skill(teams_dir(), slug, revision, resource, cache_dir())


@skill.command("log")
@click.argument("slug")
@click.option(
    "--limit", type=click.IntRange(1, 1000), default=20, show_default=True, help="Commits to list."
)
@common_options
@click.pass_context
def log(ctx: click.Context, slug: str, limit: int) -> None:
    """A skill's revisions, newest first, with state and where each came from, and the
    commits that changed its files (who and which command)."""
    emit(open_store(ctx).skill_log(slug, limit))


@skill.command("restore")
@click.argument("slug")
@click.argument("revision", metavar="R")
@click.option("--publish", is_flag=True, help="Publish the restored revision at once.")
@allow_secret_option
@common_options
@click.pass_context
def restore(ctx: click.Context, slug: str, revision: str, publish: bool) -> None:
    """Make revision R's files the head again, as a new revision (a rollback; history is
    never rewritten)."""
    emit(open_store(ctx).skill_restore(slug, revision, publish=publish))


@skill.command("diff")
@click.argument("slug")
@click.argument("old", metavar="A")
@click.argument("new", metavar="B")
@click.option(
    "--format",
    "form",
    type=click.Choice(["hunks", "ops", "unified"]),
    default="hunks",
    show_default=True,
    help="hunks: the changes with a few words of context (bounded); ops: every op, "
    "lossless, plus a rendering; unified: a line diff for people (plain text).",
)
@common_options
@click.pass_context
def diff(ctx: click.Context, slug: str, old: str, new: str, form: str) -> None:
    """Word-level changes from revision A to B (ids or numbers), file by file.

    By default each changed text file lists hunks: {line, ops} with a few words of
    unchanged context around each change ({op, old, new}; Chinese cut like jieba), and
    the counts of words removed and added. --format ops gives the full ops, whose pieces
    rebuild both texts exactly, and a rendering with [-removed-] and {+added+}.
    """
    found = open_store(ctx).skill_diff(slug, old, new, form)
    if form != "unified":
        emit(found)
        return
    from ..text import mark_hidden  # what can hide text from a reviewer, marked visibly

    for item in found["files"]:
        if item.get("binary"):
            click.echo(f"Binary file {item['path']} {item['status']}")
        elif "unified" in item:
            click.echo(mark_hidden(item["unified"]), nl=False)


def _lifecycle(verb: str, help_text: str, takes_revision: bool) -> click.Command:
    @common_options
    @click.pass_context
    def command(ctx: click.Context, slug: str, revision: str | None = None) -> None:
        emit(open_store(ctx).skill_lifecycle(verb, slug, revision))

    command.__doc__ = help_text
    if takes_revision:
        command = click.argument("revision", metavar="R")(command)
    command = click.argument("slug")(command)
    return skill.command(verb)(command)


_lifecycle(
    "publish",
    "Publish revision R (id or number); the previously published one is deprecated.",
    True,
)
_lifecycle("deprecate", "Deprecate revision R (it stays readable).", True)
_lifecycle("archive", "Hide a skill from Level 0 recall (still readable).", False)
_lifecycle("unarchive", "Make an archived skill active again.", False)


@skill.command("export")
@click.argument("slug")
@click.argument("out", metavar="OUT.zip", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--revision", metavar="R", help="Revision to export (default: published, else head).")
@click.option("--force", is_flag=True, help="Overwrite OUT.zip if it exists.")
@common_options
@click.pass_context
def export(ctx: click.Context, slug: str, out: Path, revision: str | None, force: bool) -> None:
    """Write one revision as a deterministic ZIP (0600) that imports back identically.
    OUT.zip must be outside the store, and new unless --force."""
    emit(open_store(ctx).skill_export(slug, out, revision, force=force))


def _level0(store: Path, text: str, limit: int) -> int:
    """Print Level 0 for ``text``: a running server's answer, else this process's (in
    lexical mode, saying so, while a server starts when semantic recall is on), with
    every team layer's skills merged in (``xbrain team``: then this process answers,
    since the server reads the personal store only); the exit code."""
    from ..autoserve import WARMING, warming
    from ..lightcli import print_served, teams_dir
    from ..retrieval.skillrecall import recall as level0
    from ..serveclient import ask
    from ..team.place import team_layers

    layered = bool(team_layers(teams_dir()))
    if not layered:
        served, code, body = ask(store, "skill-recall", [("query", text), ("limit", str(limit))])
        if served:
            return print_served(code, body)
    warm = warming(store, None)
    found = level0(store, cache_dir(), text, limit, mode="lexical" if warm else None)
    if layered:
        from ..team.reads import recall_skills

        found = recall_skills(teams_dir(), found, text, limit, cache_dir())
    emit({**found, "retrieval": WARMING} if warm else found)
    return 0
