"""``xbrain recall`` without click: the command a hook runs on every prompt.

click costs ≈ 16 ms to import, a sixth of a recall in a fresh process. The console
script hands ``recall`` here first; this parses only the plain forms of the command's
own options (``--name VALUE``, ``--name=VALUE``, ``-``) and answers ``None`` for
anything else — ``--help``, an unknown option, a value of the wrong type, a global
option — so click parses those and says what is wrong exactly as it always does. What
recall does with the options is one function, ``answer``, that the click command calls
too.
"""

from __future__ import annotations

import contextlib
import os
import sys

from .userdirs import cache_dir, user_dir

TYPE_CHECKING = False  # on every prompt's path: neither typing nor pathlib at import
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, BinaryIO

__all__ = [
    "ENTRY_KINDS",
    "MODES",
    "ONLY",
    "SCORING",
    "Progress",
    "answer",
    "cache_dir",
    "failed",
    "layered_recall",
    "note_missing_store",
    "parse_plain",
    "parse_recall",
    "print_document",
    "print_served",
    "read_prompt",
    "run_recall",
    "say",
    "stdin_stream",
    "stdout_failed",
    "teams_dir",
    "tracebacks_wanted",
    "write_stdout",
]

ENTRY_KINDS = ("rule", "memory", "workflow", "tool-guidance", "session-learning", "stop-rule")
ONLY = (*ENTRY_KINDS, "skill", "resource")
SCORING = ("relative", "absolute")
MODES = ("lexical", "semantic", "hybrid")


def store_location(value: str) -> str:
    """A store (or cache) path as given, with a leading ``~`` read as the home folder: an
    MCP client's ``args`` and a hook's settings reach xbrain with no shell to expand it,
    and ``~/store`` made a folder named ``~`` wherever the client happened to run."""
    return os.path.expanduser(value)


_VALUES: dict[str, tuple[str, Any]] = {  # option → (parameter, int | float | str | choices)
    "--scoring": ("scoring", SCORING),
    "--mode": ("mode", MODES),
    "--top-k": ("top_k", int),
    "--threshold": ("threshold", float),
    "--max-dropoff": ("max_dropoff", float),
    "--budget": ("budget", int),
    "--project": ("project", str),
    "--session": ("session", str),
    "--path": ("path", str),
    "--only": ("only", ONLY),
    "--store": ("store", store_location),
}
_FLAGS = {"--include-retired": "include_retired"}


def parse_recall(args: list[str]) -> dict[str, Any] | None:
    """The parameters of ``xbrain recall ARGS``, or None when click should parse them."""
    found = parse_plain(args, _VALUES, _FLAGS, query=False)
    if found is None:
        return None
    found.pop("query", None)
    found["only"] = tuple(found.get("only", ()))
    return found


def parse_plain(
    args: list[str], values: dict[str, tuple[str, Any]], flags: dict[str, str], *, query: bool
) -> dict[str, Any] | None:
    """Options ``--name VALUE`` / ``--name=VALUE`` / flags, and the one positional
    argument under ``"query"`` (``query`` False: only ``-``; True: any word); None for
    anything click should see. A value's kind is a tuple of choices or a converter that
    raises ValueError for what click refuses."""
    found: dict[str, Any] = {}
    rest = iter(args)
    for arg in rest:
        if arg == "-" or (query and not arg.startswith("-")):
            if "query" in found or (not query and arg != "-"):
                return None  # a second argument: click says what is wrong
            found["query"] = arg
            continue
        name, eq, value = arg.partition("=")
        if name in flags and not eq and flags[name] not in found:
            found[flags[name]] = True
            continue
        if name not in values:
            return None  # --help, --, a global option, an unknown one
        if not eq:
            value = next(rest, "")
            if not value or value.startswith("-"):
                return None  # click says what is missing
        param, kind = values[name]
        try:
            parsed = value if isinstance(kind, tuple) else kind(value)
        except ValueError:
            return None
        if isinstance(kind, tuple) and value not in kind:
            return None
        if param == "only":
            found.setdefault("only", []).append(parsed)
        elif param in found:
            return None  # given twice: click decides which one counts
        else:
            found[param] = parsed
    return found


def answer(
    store: Path,
    data: bytes,
    *,
    session: str | None = None,
    include_retired: bool = False,
    project: str | None = None,
    only: tuple[str, ...] = (),
    cwd: str | None = None,
    path: str | None = None,
    record: bool = True,
    **given: Any,
) -> dict[str, Any]:
    """What ``xbrain recall`` prints for the prompt (or hook payload) ``data``; ``cwd``:
    the caller's working directory when the payload names none; ``path``: a file, to
    route by the entries' ``paths`` (relative to the working directory); ``record``
    False: telemetry notes nothing (a look in ``xbrain ui``, not a recall)."""
    from .recall.route import Options, read_request

    request = read_request(data)
    if session is not None:
        request = request.changed(session=session)
    if path is not None:
        request = request.changed(path=path)
    if request.cwd is None and cwd is not None:
        request = request.changed(cwd=cwd)
    options = Options.of(include_retired=include_retired, project=project, only=only, **given)
    if not record:
        options = options.changed(record=False)
    return layered_recall(store, request, options)


def layered_recall(store: Path, request: Any, options: Any) -> dict[str, Any]:
    """Recall in the personal store and every team layer (``xbrain team``), merged."""
    from .recall.route import recall
    from .team.place import team_layers

    layers = team_layers(teams_dir())
    if layers:
        from .search.tokenize import keep_warm

        keep_warm()  # every layer's recall cuts Chinese with one segmenter, loaded once
    found = recall(store, cache_dir(), request, options)
    if not layers:
        return found
    from pathlib import Path

    from .team.layers import layered_recall as merge
    from .team.layers import session_kept

    def ask(layer: Any) -> dict[str, Any]:
        with session_kept(layer, request.session):
            return recall(Path(layer.path), cache_dir(), request, options)

    return merge(found, layers, ask, options.top_k)


def run_recall(args: list[str]) -> int | None:
    """Run ``xbrain recall ARGS`` if this module can parse them: the exit code, or None."""
    found = parse_recall(args)
    if found is None:
        return None
    store = found.pop("store", None)
    try:
        where = store if store is not None else default_store_path()
        data = read_prompt(found.get("path") is not None)
        from .serveclient import ask
        from .workdir import working_directory

        fields = [("argv", arg) for arg in args] + [("cwd", working_directory())]
        served, code, body = ask(where, "recall", fields, data)
        if served:
            return print_served(code, body)
        from pathlib import Path

        from .autoserve import WARMING, warming

        warm = warming(where, found.get("mode"))  # a server starts: answer lexically
        result = answer(Path(where), data, **({**found, "mode": "lexical"} if warm else found))
        if warm:
            result["retrieval"] = WARMING
        note_missing_store(where)
    except Exception as exc:
        return failed(exc)
    return print_document(result)


class Progress:
    """A progress bar on stderr, only when stderr is a terminal; made (and click loaded)
    on first use — an index build."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.bar: Any = None

    def __call__(self, step: int, total: int) -> None:  # noqa: D102
        if not sys.stderr.isatty():
            return
        if self.bar is None:
            import click

            self.bar = click.progressbar(length=total, label=self.label, file=sys.stderr)
        self.bar.update(step)

    def finish(self) -> None:
        """End the bar (when one was shown)."""
        if self.bar is not None:
            self.bar.render_finish()


def print_document(value: Any) -> int:
    """Print ``value`` as one JSON document on stdout, in UTF-8 whatever stdout's text
    encoding (``PYTHONIOENCODING=ascii``, a C locale): JSON between programs is UTF-8
    (RFC 8259), and a served answer is these same bytes. The exit code: 0, or 1 when
    the reader closed the pipe first."""
    from .codec import json_document

    return 0 if write_stdout(json_document(value).encode("utf-8")) else 1


def read_prompt(optional: bool = False) -> bytes:
    """The prompt on stdin (at most 1 MiB); ``optional`` (``recall --path``): nothing
    when stdin is a terminal, rather than waiting for someone to type."""
    stream = stdin_stream()
    if optional:
        with contextlib.suppress(AttributeError, ValueError, OSError):
            if stream.isatty():
                return b""
    return stream.read(1 << 20)


def stdin_stream() -> BinaryIO:
    """Standard input as bytes; empty when the command was started with stdin closed
    (`<&-`, a daemon's descriptors), where Python has none at all, so ``-`` reads
    nothing rather than failing on a missing stream."""
    if sys.stdin is None:
        import io

        return io.BytesIO()
    return sys.stdin.buffer


def write_stdout(data: bytes) -> bool:
    """Write ``data`` to stdout; False when nobody can read it: the reader closed the
    pipe first (`| head`), or the command was started with stdout closed (`>&-`), where
    Python has no stdout at all. Either way there is nobody to tell, so no traceback.
    Output that cannot be written (`> /dev/full`, a full disk) is one line on stderr."""
    stream = sys.stdout
    if stream is None:
        return False
    try:
        stream.flush()
        stream.buffer.write(data)
        stream.buffer.flush()
    except OSError as exc:
        stdout_failed(exc)
        return False
    return True


def stdout_failed(exc: OSError) -> None:
    """After a write to stdout failed: stdout goes nowhere from now on (no second error
    when Python flushes it on exit), and unless the reader just closed the pipe, the
    reason is one line on stderr."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.__stdout__.fileno())  # type: ignore[union-attr]
        os.close(null)
    if not isinstance(exc, BrokenPipeError):
        from .errors import describe

        say(describe(exc)[0])


def say(line: str) -> None:
    """One line on stderr, if there is a stderr that takes it."""
    if sys.stderr is None:
        return
    try:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def print_served(code: int, body: bytes) -> int:
    """Print a server's answer as the command would have: its output on stdout (exit 0)
    or its one-line error on stderr; the exit code."""
    if code == 0:
        return 0 if write_stdout(body) else 1
    with contextlib.suppress(OSError, ValueError, AttributeError):  # stderr closed: no line
        sys.stderr.flush()
        sys.stderr.buffer.write(body)
        sys.stderr.buffer.flush()
    return code


def tracebacks_wanted() -> bool:
    """$XBRAIN_TRACEBACK switched on (1, true, yes, on): show Python tracebacks on errors."""
    return os.environ.get("XBRAIN_TRACEBACK", "").strip().lower() in ("1", "true", "yes", "on")


def note_missing_store(where: str) -> None:
    """One line on stderr when there is no store at ``where`` (``inputs.no_store``):
    ``search`` and ``recall`` still answer, empty. Nothing when a team layer answers
    (a member whose memory is the team's has no store of their own)."""
    from .inputs import no_store

    message = no_store(where)
    if message:
        from .team.place import team_layers

        if not team_layers(teams_dir()):
            say(message)


def failed(exc: BaseException, show_traceback: bool = False) -> int:
    """Say why, in one line, as the CLI does (with the traceback when asked); the exit
    code."""
    from .errors import describe

    if show_traceback or tracebacks_wanted():
        import traceback

        traceback.print_exc()
    message, code = describe(exc)
    say(message)  # the exit code tells, even when stderr is closed (`2>&-`)
    return code


def default_store() -> Path:
    """The store when no --store is given: $XBRAIN_STORE, else the user data dir."""
    from pathlib import Path

    return Path(default_store_path())


def default_store_path() -> str:
    """``default_store`` as a string (no pathlib: the served path never needs it)."""
    env = os.environ.get("XBRAIN_STORE")
    if env:
        return store_location(env)
    return os.path.join(user_dir("data"), "store")


def teams_dir() -> str:
    """Where team stores live: $XBRAIN_TEAMS_DIR, else ``teams`` in the user data dir."""
    env = os.environ.get("XBRAIN_TEAMS_DIR")
    return store_location(env) if env else os.path.join(user_dir("data"), "teams")
