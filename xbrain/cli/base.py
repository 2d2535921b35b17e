"""What every command shares: the options accepted anywhere, the store and cache paths,
the library ``Store`` they open, and one JSON document on stdout."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, overload

import click

from ..lightcli import (
    Progress,
    cache_dir,
    default_store,
    print_document,
    stdin_stream,
    store_location,
    tracebacks_wanted,
)

if TYPE_CHECKING:
    from pathlib import Path

__all__ = [
    "Progress",
    "Settings",
    "allow_secret_option",
    "cache_dir",
    "common_options",
    "emit",
    "open_store",
    "quiet_network_libraries",
    "read_input",
    "show_tracebacks",
    "store_path",
]


def show_tracebacks(ctx: click.Context) -> bool:
    """--traceback or $XBRAIN_TRACEBACK."""
    settings = ctx.find_object(Settings)
    return (settings is not None and settings.traceback) or tracebacks_wanted()


class Settings:
    """Options that may be given before or after the command name."""

    def __init__(self) -> None:
        self.store: Path | None = None
        self.wait: float | None = None
        self.agent: str | None = None
        self.traceback = False
        self.allow_secret: tuple[str, ...] = ()


def _remember(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    if param.name == "store" and value is not None:
        from pathlib import Path  # not at import: ``xbrain --help`` never needs pathlib

        value = Path(store_location(value))
    settings = ctx.ensure_object(Settings)
    if value is not None and value is not False:
        setattr(settings, param.name or "", value)
    return value


@overload
def common_options(func: Any) -> Any: ...
@overload
def common_options(*, wait_default: str) -> Callable[[Any], Any]: ...
def common_options(func: Any = None, *, wait_default: str = "0, fail at once") -> Any:
    """``--store/--wait/--agent/--traceback``, accepted on the group and every command
    (``@common_options``, or ``@common_options(wait_default=…)`` where a command waits by
    default, so its help shows its real default)."""
    if func is None:
        return lambda command: _with_common_options(command, wait_default)
    return _with_common_options(func, wait_default)


def _with_common_options(func: Any, wait_default: str) -> Any:
    options = [
        click.option(
            "--store",
            type=click.Path(),  # a file here is "not a store" (exit 7); a Path in _remember
            expose_value=False,
            callback=_remember,
            help="Store directory [default: $XBRAIN_STORE, else the platform data dir].",
        ),
        click.option(
            "--wait",
            type=click.FloatRange(min=0),
            expose_value=False,
            callback=_remember,
            help=f"Seconds to wait for a busy store [default: {wait_default}].",
        ),
        click.option(
            "--agent",
            expose_value=False,
            callback=_remember,
            help="Agent name recorded in the commit (Xbrain-Agent) [default: $XBRAIN_AGENT].",
        ),
        click.option(
            "--traceback",
            is_flag=True,
            expose_value=False,
            callback=_remember,
            help="Show Python tracebacks on errors.",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def allow_secret_option(func: Any) -> Any:
    """``--allow-secret DETECTOR`` (repeatable), on the commands that write text."""
    from ..secretscan import DETECTORS

    return click.option(
        "--allow-secret",
        type=click.Choice(DETECTORS, case_sensitive=False),
        multiple=True,
        metavar="DETECTOR",
        expose_value=False,
        callback=_remember,
        help="Store text this secret detector flags, for this write only; the commit "
        "records it (Xbrain-Allowed-Secret). Repeatable.",
    )(func)


def store_path(ctx: click.Context) -> Path:
    """The store directory: --store, then $XBRAIN_STORE, then the user data dir."""
    settings = ctx.ensure_object(Settings)
    if settings.store is not None:
        return settings.store
    found: Path = default_store()
    return found


def open_store(ctx: click.Context) -> Any:
    """A library Store configured from the command line and environment."""
    from ..store import Store

    settings = ctx.ensure_object(Settings)
    agent = settings.agent if settings.agent is not None else os.environ.get("XBRAIN_AGENT")
    store = Store(
        store_path(ctx),
        wait=settings.wait or 0.0,
        agent=agent,
        cache_dir=cache_dir(),
        allow_secrets=frozenset(name.lower() for name in settings.allow_secret),
    )
    from ..lightcli import teams_dir
    from ..team.autosync import after_write

    store.core.after_commit.append(after_write(store.path, teams_dir()))  # sync.auto
    return store


def quiet_network_libraries() -> None:
    """Libraries that talk to remotes (urllib3's retries) must not log to stderr: an error
    is one line. Only commands that reach a remote pay for importing logging."""
    import logging

    logging.getLogger().addHandler(logging.NullHandler())


def emit(value: Any) -> None:
    """Print one JSON document to stdout (UTF-8, whatever stdout's text encoding); a
    reader that closed the pipe first makes the exit code 1, quietly."""
    if print_document(value):
        raise SystemExit(1)


def emit_layered(
    personal: Callable[[], Any],
    team: Callable[[Any], dict[str, Any] | None],
    where: Path | None = None,
) -> None:
    """Print ``personal()``; a record this store does not hold is looked for in the team
    layers (``team(teams_dir)``: ``{layer, trust, provenance, …}``), else not found — and
    when there is no store at ``where``, the one line says so (a mistyped --store must not
    look like a record that is missing)."""
    from ..errors import NotFoundError

    try:
        emit(personal())
    except NotFoundError as exc:
        from ..lightcli import teams_dir

        found = team(teams_dir())
        if found is None:
            from ..inputs import no_store

            missing = None if where is None else no_store(str(where))
            if missing:
                raise NotFoundError(f"{exc} {missing}") from None
            raise
        emit(found)


def read_input(source: str) -> Any:
    """JSON from FILE or ``-`` (stdin), bounded and validated."""
    from pathlib import Path

    from ..inputs import read_json_input

    return read_json_input(stdin_stream() if source == "-" else Path(source))
