"""``xbrain telemetry``: what recall showed, from the local database (nothing leaves)."""

from __future__ import annotations

import click

from ..errors import UsageError
from .base import common_options, emit, open_store


@click.command("telemetry")
@click.option("--session", metavar="ID", help="The trace of one session: what was shown, when.")
@click.option("--unused", is_flag=True, help="Active entries no recall has shown (retire them?).")
@click.option(
    "--clear", is_flag=True, help="Erase what was recorded on this device (no commit; not undone)."
)
@common_options
@click.pass_context
def telemetry(ctx: click.Context, session: str | None, unused: bool, clear: bool) -> None:
    """Report local recall telemetry (what recall showed; never prompt text).

    Per entry: matches, sessions, first and last match, hits per query. It stays in
    .git/xbrain on this machine; `xbrain config telemetry off` stops recording and
    `--clear` erases what was recorded.
    """
    if (session is not None) + unused + clear > 1:
        raise UsageError("Give one of --session, --unused and --clear.")
    store = open_store(ctx)
    emit(store.clear_telemetry() if clear else store.telemetry(session, unused))
