"""Agent front ends: mcp, hook."""

from __future__ import annotations

import sys

import click

from .base import common_options, open_store, store_path


@click.command("mcp")
@click.option(
    "--allow-publish",
    is_flag=True,
    help="Let save_skill publish when asked (default: saved skills land as proposed).",
)
@common_options
@click.pass_context
def mcp_command(ctx: click.Context, allow_publish: bool) -> None:
    """Serve the store to an MCP client over stdio (needs: pip install 'xbrain[mcp]').

    Tools: search, get, list, log, diff, status, recall_skill (read-only), put, delete,
    restore, save_skill. The store is fixed at start-up
    (--store, else $XBRAIN_STORE, else the default); a client cannot choose another.
    Errors come back as tool errors with the CLI's messages. There is no sync or push
    tool: sending data off the machine stays an explicit command of yours. A busy store
    is waited for up to --wait seconds (default 5 here). Logs go to stderr only.
    """
    from ..mcp_server import Tools, serve
    from .base import Settings, show_tracebacks

    settings = ctx.ensure_object(Settings)
    store = open_store(ctx)
    wait = settings.wait if settings.wait is not None else 5.0
    tools = Tools(
        store.path, store.cache_dir, wait=wait, agent=store.agent, allow_publish=allow_publish
    )
    if sys.stdin.isatty():  # started by hand rather than by an MCP client
        click.echo(f"xbrain mcp: serving {store.path} over stdio; Ctrl-C to stop.", err=True)
    serve(tools, show_tracebacks=show_tracebacks(ctx))


@click.command("hook")
@click.argument("harness", metavar="AGENT", type=click.Choice(["claude-code"]))
@common_options
@click.pass_context
def hook_command(ctx: click.Context, harness: str) -> None:
    """Answer an agent's hook (claude-code): the payload on stdin, the answer on stdout.

    \b
    claude-code: for the Claude Code hook events
      UserPromptSubmit  recall for the prompt (rules, memories, skill pointers,
                        resources to cite), as additionalContext
      PreToolUse        tool-guidance entries for the tool and its input
      Stop              a matching stop-rule blocks the stop once, with its text
      SessionStart      a reminder of how to use xbrain
    In settings.json: {"type": "command", "command": "/abs/path/to/xbrain hook
    claude-code"} for each event. It never fails what it hooks: any problem means no
    output and exit 0, with one line in the cache dir's hook.log. Tune with
    XBRAIN_HOOK_LIMIT (3), XBRAIN_HOOK_BUDGET (4000 characters) and
    XBRAIN_HOOK_TIMEOUT (5 seconds); XBRAIN_STORE chooses the store.
    """
    from ..hookcli import claude_code

    ctx.exit(claude_code(store_path(ctx)))
