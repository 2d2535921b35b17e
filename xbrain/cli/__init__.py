"""The ``xbrain`` command: click parsing, one error exit point, JSON on stdout.

Only this package reads the environment, argv and the terminal, resolves default paths
and prints. The group is lazy: ``COMMANDS`` names the module of each command, which is
imported only when that command runs, so ``--help`` and every command pay only for what
they use. To add a command, write it in the module of its area (or a new one) and add
one line to ``COMMANDS``.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

import click

from ..errors import describe, one_line
from .base import common_options, show_tracebacks

__all__ = ["COMMANDS", "main", "top_help"]

EPILOG = """\b
Exit codes: 0 ok, 1 error, 2 usage, 3 not found, 4 invalid input,
5 conflict/stale, 6 store busy, 7 store corrupt, 8 provider/remote failure,
130 interrupted.
"""

# name → (module under xbrain.cli, function, the first paragraph of its help: what
# ``xbrain --help`` lists without importing the module; a test keeps them equal)
COMMANDS: dict[str, tuple[str, str, str]] = {
    "adopt": (
        "records",
        "adopt",
        "Validate and commit hand edits of record files in the working tree.",
    ),
    "analyze": (
        "records",
        "analyze",
        "Attach a visual design analysis: {id, resourceRevision, design} from FILE or -.",
    ),
    "backup": (
        "remotes",
        "backup",
        "Back up the whole store into one file; xbrain clone FILE DIR restores it.",
    ),
    "capture": (
        "ingest",
        "capture",
        "Capture a bookmark library as provider-x resources (local only, no network).",
    ),
    "clone": (
        "remotes",
        "clone_command",
        "Restore a store from URL into DIRECTORY (e.g. a backup on a new machine).",
    ),
    "config": (
        "records",
        "config",
        "Show the store's settings, or set KEY to VALUE (one commit).",
    ),
    "delete": (
        "records",
        "delete",
        "Delete a resource locally, leaving a tombstone.",
    ),
    "diff": (
        "history",
        "diff",
        "Field-level and line-level changes of a resource or an entry between revisions.",
    ),
    "distill": (
        "ingest",
        "distill",
        (
            "Apply distillations: {id, sourceRevision, resourceRevision, summary, purpose, "
            "useWhen, limitations} (or an array of 1–100) from FILE or -."
        ),
    ),
    "doctor": (
        "upkeep",
        "doctor",
        "Check records, catalog, working tree, permissions and git objects.",
    ),
    "entry": (
        "entries",
        "entry",
        "Rules and memories routed into an agent's context when a prompt needs them.",
    ),
    "export-store": (
        "upkeep",
        "export_store",
        "Write the store as an original single-file JSON store (private content, 0600).",
    ),
    "gc": (
        "upkeep",
        "gc",
        "Consolidate the store's git objects into one pack, with deltas (takes the lock).",
    ),
    "get": (
        "records",
        "get",
        "Print one resource. Prints private content to stdout.",
    ),
    "import-store": (
        "upkeep",
        "import_store",
        "Import an original single-file JSON store (version 1) into an empty store.",
    ),
    "hook": (
        "agents",
        "hook_command",
        "Answer an agent's hook (claude-code): the payload on stdin, the answer on stdout.",
    ),
    "init": (
        "records",
        "init",
        "Create the store (a private git repository) if it does not exist.",
    ),
    "inspect": (
        "records",
        "inspect",
        "Print a resource with its resourceRevision (needed by analyze). Private content.",
    ),
    "list": (
        "records",
        "list_command",
        "Browse resources, newest updatedAt first, as brief records. Prints private content.",
    ),
    "log": (
        "history",
        "log",
        "Commits of the store (or of one resource or entry), newest first: who changed what, when.",
    ),
    "mcp": (
        "agents",
        "mcp_command",
        "Serve the store to an MCP client over stdio (needs: pip install 'xbrain[mcp]').",
    ),
    "pending": (
        "ingest",
        "pending",
        "Resources waiting for distillation, with the revisions distill needs. Private content.",
    ),
    "project": (
        "project",
        "project",
        "Link published skills and always-on rules into an agent's folders.",
    ),
    "pull": (
        "ingest",
        "pull",
        "Pull new or changed items page by page from a source adapter you chose.",
    ),
    "put": (
        "records",
        "put",
        "Add or update resources from a JSON file (or - for stdin).",
    ),
    "purge": (
        "upkeep",
        "purge",
        "Remove records (by ID) or every occurrence of a string from the whole history.",
    ),
    "recall": (
        "recall",
        "recall",
        "Recall for a prompt on stdin (plain text or a Claude Code hook payload).",
    ),
    "reindex": (
        "find",
        "reindex",
        "Rebuild the search indexes from the committed records (they are derived data).",
    ),
    "remote": (
        "remotes",
        "remote",
        "Git remotes for backups and other devices (only ones you add; never implicit).",
    ),
    "restore": (
        "history",
        "restore",
        "Write a resource's or an entry's content from a past revision as a new revision.",
    ),
    "review": (
        "review",
        "review",
        "The review queue: proposed entries and resources, to accept, reject or edit.",
    ),
    "search": (
        "find",
        "search",
        "Find resources for QUERY (English, Chinese or mixed). Prints private content.",
    ),
    "serve": (
        "agents",
        "serve_command",
        "Keep recall warm: one process per store on a private Unix socket.",
    ),
    "share": (
        "team",
        "share_command",
        "Propose one resource, entry or skill revision of yours to team NAME.",
    ),
    "show": (
        "history",
        "show",
        "A resource or an entry as it was at a revision. Prints private content.",
    ),
    "supersede": (
        "records",
        "supersede",
        "Record that resource (or entry) NEW supersedes OLD; OLD is kept, no longer recalled.",
    ),
    "skill": (
        "skills",
        "skill",
        "Procedures, runbooks and prompts in the Agent Skills format, with immutable revisions.",
    ),
    "ui": (
        "ui",
        "ui",
        "Browse the store in a local web page (needs: pip install 'xbrain[ui]').",
    ),
    "team": (
        "team",
        "team",
        "Team stores read beside your own (add a team's git URL; share records to it).",
    ),
    "telemetry": (
        "telemetry",
        "telemetry",
        "Report local recall telemetry (what recall showed; never prompt text).",
    ),
    "status": (
        "upkeep",
        "status",
        "Which store, whether it exists, counts of resources, tombstones and pending work.",
    ),
    "sync": (
        "upkeep",
        "sync",
        "Send resources and deletions to a personal provider you chose explicitly.",
    ),
}


class XbrainGroup(click.Group):
    """The lazy top-level group; every XbrainError becomes one stderr line and its code."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = COMMANDS.get(cmd_name)
        if entry is None:
            return None
        module = importlib.import_module(f"{__name__}.{entry[0]}")
        command: click.Command = getattr(module, entry[1])
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list from ``COMMANDS``, without importing any command module."""
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max(len(name) for name in names)  # as click does
        rows = [(name, _short(COMMANDS[name][2], limit)) for name in names]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.ClickException, click.Abort):
            raise
        except (Exception, KeyboardInterrupt) as exc:
            if show_tracebacks(ctx):
                import traceback

                traceback.print_exc()
            message, code = describe(exc)
            click.echo(message, err=True)
            ctx.exit(code)
        return None


def _short(text: str, limit: int) -> str:
    """click's own shortening of a help paragraph to ``limit`` characters (at a word)."""
    return click.Command("x", help=text).get_short_help_str(limit)


@click.group(
    cls=XbrainGroup,
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog=EPILOG,
)
@click.version_option(
    package_name="xbrain",
    prog_name="xbrain",
    message="%(prog)s, version %(version)s",  # click's own text; given, it skips a gettext lookup
)
@common_options
def cli() -> None:
    """xbrain — private, local, git-backed memory for AI agents.

    Memory is local by default: no provider or remote is ever chosen implicitly and
    local commands make no network access. Every change is a git commit in the store.
    """


def top_help() -> str:
    """``xbrain --help`` as click prints it on a terminal at least 80 columns wide (or not a
    terminal): the text ``xbrain.helptext`` keeps (``make helptext`` writes it)."""
    with cli.make_context("xbrain", ["--help"], terminal_width=78, resilient_parsing=True) as ctx:
        return ctx.get_help() + "\n"


def main() -> None:
    """Console-script entry point: every error, usage errors included, is one line."""
    try:
        code = cli.main(prog_name="xbrain", standalone_mode=False)
    except click.UsageError as exc:
        hint = f" (see: {exc.ctx.command_path} --help)" if exc.ctx is not None else ""
        click.echo(f"{one_line(exc.format_message())}{hint}", err=True)
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        click.echo(one_line(exc.format_message()), err=True)
        sys.exit(exc.exit_code)
    except click.Abort:
        click.echo("Interrupted.", err=True)
        sys.exit(130)
    except OSError as exc:  # help text stdout cannot take (> /dev/full, a closed pipe)
        from ..lightcli import stdout_failed

        stdout_failed(exc)
        sys.exit(1)
    sys.exit(code if isinstance(code, int) else 0)
