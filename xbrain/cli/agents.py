"""Agent front ends: mcp, hook, serve."""

from __future__ import annotations

import sys
from typing import Any

import click

from .base import common_options, emit, open_store, store_path


@click.command("mcp")
@click.option(
    "--allow-publish",
    is_flag=True,
    help="Let save_skill publish when asked (default: saved skills land as proposed).",
)
@click.option(
    "--writes-in-force",
    "in_force",
    is_flag=True,
    help="Let put write resources in force (default: new ones land proposed for review).",
)
@click.option(
    "--tools",
    "only",
    metavar="LIST",
    help="Serve only these tools (comma-separated names, or the profiles all and "
    "read-only), e.g. recall,search,get: a client sees and calls nothing else.",
)
@common_options(wait_default="5")
@click.pass_context
def mcp_command(ctx: click.Context, allow_publish: bool, in_force: bool, only: str | None) -> None:
    """Serve the store to an MCP client over stdio (needs: pip install 'xbrain[mcp]').

    Tools: search, get, list, log, diff, status, recall, recall_skill (read-only), put,
    delete, restore, save_skill, propose_entry; --tools serves only some (per client: --tools
    read-only, --tools recall,recall_skill). The store is fixed at start-up
    (--store, else $XBRAIN_STORE, else the default); a client cannot choose another.
    Errors come back as tool errors with the CLI's messages. There is no sync or push
    tool: sending data off the machine stays an explicit command of yours. A busy store
    is waited for up to --wait seconds. Logs go to stderr only.
    """
    from ..lightcli import teams_dir
    from ..mcp_server import Tools, serve
    from ..mcp_server.profiles import tool_profile
    from .base import Settings, show_tracebacks

    settings = ctx.ensure_object(Settings)
    served = tool_profile(only)  # an unknown name: a usage error before anything else
    store = open_store(ctx)
    wait = settings.wait if settings.wait is not None else 5.0
    tools = Tools(
        store.path,
        store.cache_dir,
        wait=wait,
        agent=store.agent,
        allow_publish=allow_publish,
        only=served,
        in_force=in_force,
        teams=teams_dir(),
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
      PreToolUse        tool-guidance entries for the tool and its input, and for
                        Edit, Write, MultiEdit, Read, NotebookEdit the entries whose
                        paths globs match the file
      PostToolUse       the tool's name and outcome in the session's trace (also
                        PostToolUseFailure; never its input or output)
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


@click.command("serve")
@click.option(
    "--idle",
    type=click.FloatRange(min=1),
    default=1800,
    show_default=True,
    help="Exit after this many seconds without a request.",
)
@click.option("--detach", is_flag=True, help="Start in the background and return at once.")
@click.option("--stop", is_flag=True, help="Stop the store's running server.")
@common_options
@click.pass_context
def serve_command(ctx: click.Context, idle: float, detach: bool, stop: bool) -> None:
    """Keep recall warm: one process per store on a private Unix socket.

    recall, search and the hooks ask it first (a fresh process then answers in a few
    milliseconds of work instead of loading everything) and do the work themselves when
    it does not answer. It holds the modules, the tokenizer and — with semantic recall
    on — the model and vectors; it reads main afresh on every request, so it never
    answers from an old commit. The socket lives in $XDG_RUNTIME_DIR/xbrain (else
    /tmp/xbrain-UID), 0600 in a 0700 directory of yours; a path that is not yours is
    refused. It exits after --idle seconds without a request, on --stop, or on SIGTERM.
    """
    from ..server import serve
    from ..server import stop as stop_server

    store = store_path(ctx)
    if stop:
        emit(stop_server(store))
        return
    if detach:
        emit(_detached(store, idle))
        return

    def ready(info: dict[str, Any]) -> None:
        click.echo(f"xbrain serve: listening on {info['socket']} (pid {info['pid']})", err=True)
        if "warning" in info:
            click.echo(f"xbrain serve: semantic recall: {info['warning']}", err=True)

    from .base import cache_dir

    emit(serve(store, cache_dir(), idle, ready))


def _detached(store: Any, idle: float) -> dict[str, Any]:
    """Start ``xbrain serve`` in its own session and wait until it answers (its stderr
    goes to a private temporary file, read only to say why it did not start)."""
    import os
    import subprocess
    import tempfile
    import time

    from ..autoserve import serve_command
    from ..errors import ConflictError, ProviderError
    from ..serveclient import ask, socket_path

    if ask(store, "ping", [])[0]:
        raise ConflictError(f"A server already runs for this store ({socket_path(store)}).")
    argv = [*serve_command(store), "--idle", str(idle)]
    with (
        open(os.devnull, "rb") as devnull_in,
        open(os.devnull, "wb") as devnull_out,
        tempfile.TemporaryFile() as errors,
    ):
        child = subprocess.Popen(
            argv,
            cwd=os.sep,  # (see serve_command: never the caller's folder on the import path)
            stdin=devnull_in,
            stdout=devnull_out,
            stderr=errors,
            start_new_session=True,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            served, _, pid = ask(store, "ping", [])
            if served:
                return {"socket": socket_path(store), "pid": int(pid), "detached": True}
            code = child.poll()
            if code is not None:
                errors.seek(0)
                why = errors.read(4096).decode(errors="replace").strip().splitlines()
                error = ConflictError if code == ConflictError.exit_code else ProviderError
                raise error(why[-1] if why else "xbrain serve exited at once.")
            time.sleep(0.05)
        child.kill()
    raise ProviderError("xbrain serve did not start within 30 seconds.")
