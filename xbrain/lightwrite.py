"""``xbrain put`` and ``xbrain skill save`` without click: the writes agents make.

Like ``lightcli`` for recall and search, the console script hands these two commands
here first. Only the plain forms are read (the positional source, ``--store``,
``--wait``, ``--agent``, ``--traceback``, and save's ``--publish`` and
``--expect-revision``); anything else — ``--help``, an unknown or repeated option, a
value click would refuse — answers ``None`` and click parses the command exactly as it
always does. The work is the same ``Store`` call the click command makes, in the same
order, with the same one-line errors and exit codes.
"""

from __future__ import annotations

from .lightcli import (
    cache_dir,
    default_store_path,
    failed,
    parse_plain,
    print_document,
    print_served,
    stdin_stream,
    store_location,
    tracebacks_wanted,
)
from .serveclient import NOT_SERVED

TYPE_CHECKING = False  # the write path loads neither typing nor click at import
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

__all__ = [
    "STDIN_BOUND",
    "parse_put",
    "parse_skill_save",
    "run_put",
    "run_skill_save",
    "served_write",
    "write",
]

# what a client reads of stdin to send: one byte over the larger input limit (put's
# 10 MiB; a skill's 8 MiB), so the server's reader refuses an oversized input as it would
STDIN_BOUND = (10 << 20) + 1


def _wait(value: str) -> float:
    """click's ``FloatRange(min=0)``: a float at least 0 (NaN is refused)."""
    seconds = float(value)
    if not seconds >= 0:
        raise ValueError(value)
    return seconds


def _path(value: str) -> str:
    """A store path; an empty one is click's to read (it means the current directory)."""
    if not value:
        raise ValueError(value)
    return store_location(value)


_COMMON: dict[str, tuple[str, Any]] = {
    "--store": ("store", _path),
    "--wait": ("wait", _wait),
    "--agent": ("agent", str),
}
_COMMON_FLAGS = {"--traceback": "traceback"}
_SAVE: dict[str, tuple[str, Any]] = {**_COMMON, "--expect-revision": ("expect", str)}
_SAVE_FLAGS = {**_COMMON_FLAGS, "--publish": "publish"}


def parse_put(args: list[str]) -> dict[str, Any] | None:
    """The parameters of ``xbrain put ARGS`` (``source`` is FILE or ``-``), or None when
    click should parse them."""
    return _with_source(parse_plain(args, _COMMON, _COMMON_FLAGS, query=True))


def parse_skill_save(args: list[str]) -> dict[str, Any] | None:
    """The parameters of ``xbrain skill save ARGS``, or None when click should parse them."""
    return _with_source(parse_plain(args, _SAVE, _SAVE_FLAGS, query=True))


def _with_source(found: dict[str, Any] | None) -> dict[str, Any] | None:
    if found is None or "query" not in found:
        return None
    found["source"] = found.pop("query")
    return found


def write(
    op: str,
    found: dict[str, Any],
    stdin: Any,
    store: str,
    agent: str | None,
    cache: Path | None = None,
) -> Any:
    """What ``put`` (``op`` "put") or ``skill save`` ("skill-save") prints, in the click
    command's order: the store is opened, then the source read (``stdin`` for ``-``).
    ``agent``: $XBRAIN_AGENT of the caller, used when no --agent is given; ``cache``: the
    cache directory (default: the usual one)."""
    from pathlib import Path

    from .store import Store

    given = found.get("agent")
    opened = Store(
        Path(store),
        wait=found.get("wait") or 0.0,
        agent=agent if given is None else given,
        cache_dir=cache_dir() if cache is None else cache,
    )
    from .lightcli import teams_dir
    from .team.autosync import after_write

    opened.core.after_commit.append(after_write(opened.path, teams_dir()))  # sync.auto
    source = stdin if found["source"] == "-" else Path(found["source"])
    if op == "put":
        from .inputs import read_json_input

        items = read_json_input(source)
        import gc

        if isinstance(items, list) and len(items) > 1 and not gc.isenabled():
            # a batch in a fresh write's process, which runs without Python's cycle
            # collector (``launch.main``): with it again, as each record's YAML leaves a
            # reference cycle (ruamel's loader refers to itself), 1,000 of them ≈ 190 MB
            # until collected. What is loaded by now (the modules: most of the objects)
            # stays out of its walks, and it runs every 20,000 new objects, not 700: a
            # batch into a 100,000-record store parses ~100,000 tree entries, and the
            # collector's 480 walks, three of them over everything, took ~170 ms of it
            # (now ~80 ms). A server's write (``served_write``) finds the collector on and
            # leaves it as the server has it: nothing it holds is frozen for good.
            gc.freeze()
            gc.set_threshold(20_000, 10, 10)
            gc.enable()
        return opened.put(items)
    return opened.skill_save(source, publish=bool(found.get("publish")), expect=found.get("expect"))


def _run(op: str, found: dict[str, Any] | None, args: list[str]) -> int | None:
    """Run a parsed write: through this store's ``xbrain serve`` when one runs (it has
    everything loaded), else here; the exit code, or None when click must parse."""
    if found is None:
        return None
    import os

    store = found.get("store", default_store_path())
    agent = os.environ.get("XBRAIN_AGENT")
    stdin: Any = stdin_stream()
    show = bool(found.get("traceback")) or tracebacks_wanted()
    try:
        # a write that may wait for a busy store waits in its own process: the server
        # answers one request at a time and must not be held by a lock
        if not show and not found.get("wait"):
            from .serveclient import ask, available

            try:
                here = os.getcwd()  # where the server runs the write (relative paths)
            except OSError:  # a folder removed since: the write is run here, not there
                here = None
            if here is not None and available(store):
                body = b""
                if found["source"] == "-":  # read once: here, or below if no server answers
                    import io

                    body = stdin.read(STDIN_BOUND)
                    stdin = io.BytesIO(body)
                fields = [("cwd", here), *(("argv", arg) for arg in args)]
                if agent is not None:
                    fields.append(("agent", agent))
                served, code, out = ask(store, op, fields, body, write=True)
                if served:
                    return print_served(code, out)
        return print_document(write(op, found, stdin, store, agent))
    except Exception as exc:
        return failed(exc, show)


def run_put(args: list[str]) -> int | None:
    """Run ``xbrain put ARGS`` if this module can parse them: the exit code, or None."""
    return _run("put", parse_put(args), args)


def run_skill_save(args: list[str]) -> int | None:
    """Run ``xbrain skill save ARGS`` if this module can parse them: the exit code, or
    None."""
    return _run("skill-save", parse_skill_save(args), args)


def served_write(
    op: str, args: list[str], body: bytes, store: Path, cwd: str | None, agent: str | None
) -> tuple[int, bytes]:
    """A server's answer to a write a client sent: (exit code, what the command prints).
    The request is parsed as the client parsed it and run in the client's directory, so
    relative paths and messages are the ones the command would give."""
    import io
    import os

    found = (parse_put if op == "put" else parse_skill_save)(args)
    if found is None or cwd is None:
        return NOT_SERVED, b"Use the command line for this write.\n"
    from .codec import json_document
    from .errors import describe

    # resolved before the chdir: the server's own paths may be relative to where it started
    where, cache = os.path.realpath(store), cache_dir().absolute()
    here = os.open(".", os.O_RDONLY)
    try:
        os.chdir(cwd)
        result = write(op, found, io.BytesIO(body), where, agent, cache)
    except Exception as exc:
        message, code = describe(exc)
        return code, f"{message}\n".encode("utf-8", "surrogateescape")
    finally:
        os.fchdir(here)
        os.close(here)
    return 0, json_document(result).encode()
