"""``xbrain telemetry``: what recall showed, from the local database (nothing leaves)."""

from __future__ import annotations

import click

from ..errors import UsageError
from .base import common_options, emit, open_store


@click.command("telemetry")
@click.option("--session", metavar="ID", help="The trace of one session: what was shown, when.")
@click.option("--unused", is_flag=True, help="Active entries no recall has shown (retire them?).")
@click.option(
    "--observations",
    is_flag=True,
    help="What the execution traces suggest: entries never matched, shown often but never "
    "followed by a tool call, always shown together (a report; nothing is changed).",
)
@click.option(
    "--clear", is_flag=True, help="Erase what was recorded on this device (no commit; not undone)."
)
@common_options
@click.pass_context
def telemetry(
    ctx: click.Context, session: str | None, unused: bool, observations: bool, clear: bool
) -> None:
    """Report local recall telemetry (what recall showed; never prompt text).

    Per entry: matches, sessions, first and last match, hits per query (or paths glob).
    A session's trace (--session) is what it was shown and, with the PostToolUse hook,
    the tools it called and their outcome (never their input or output). It stays in
    .git/xbrain on this machine; `xbrain config telemetry off` stops recording and
    `--clear` erases what was recorded.
    """
    if (session is not None) + unused + observations + clear > 1:
        raise UsageError("Give one of --session, --unused, --observations and --clear.")
    store = open_store(ctx)
    if clear:
        emit(store.clear_telemetry())
    else:
        emit(store.telemetry(session, unused, observations))
