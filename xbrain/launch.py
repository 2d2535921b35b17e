"""The console script's first step: a Ctrl-C while xbrain is still loading is one line.

Kept tiny (no imports at module level) so the window before the handler is as small as
Python allows; everything else loads inside ``main``.
"""

from __future__ import annotations

# The commands agents and hooks run most, and ``--help``, first try a path without click:
# (leading words of argv, module, function). The function returns the exit code, or None
# when click must parse the arguments (help, an unknown option, a value click refuses).
LIGHT = (
    (("recall",), "lightcli", "run_recall"),
    (("search",), "lightsearch", "run_search"),
    (("get",), "lightread", "run_get"),
    (("list",), "lightread", "run_list"),
    (("hook",), "hookcli", "run_hook"),
    (("put",), "lightwrite", "run_put"),
    (("skill", "save"), "lightwrite", "run_skill_save"),
    (("--help",), "tophelp", "run_help"),
    (("-h",), "tophelp", "run_help"),
)
# the light commands that run without Python's cycle collector and end with a fast exit
# (`put` and `skill save`: one write, bounded by their input limits; see `main`)
SHORT = ("lightwrite",)

# (exit code, the file descriptors open before the command) once a SHORT command returned
_ending: list[tuple[int, frozenset[str]]] = []


def main() -> None:
    """Load the CLI and run it; an interrupt at any point exits 130 with one line. The
    process ends when this returns (it raises SystemExit)."""
    import gc  # here, not at the end: `-X importtime` prints nothing after the output
    import sys

    sys.unraisablehook = _unraisable
    try:
        for words, module, function in LIGHT:
            if tuple(sys.argv[1 : 1 + len(words)]) == words:
                import importlib

                short = module in SHORT
                before = _arm() if short else None
                if short:
                    # A write's process lives for one commit. Python's cycle collector
                    # walked the young objects every 700 allocations, most of them the
                    # modules being imported (≈ 60 collections, 4–5 ms of a put); nothing
                    # a single write leaves in reference cycles is worth that. A batch
                    # turns it back on (``lightwrite.write``).
                    gc.disable()
                run = getattr(importlib.import_module(f"{__package__}.{module}"), function)
                code = run(sys.argv[1 + len(words) :])
                if code is not None:
                    if before is not None:
                        _ending.append((code, before))
                    raise SystemExit(code)
                gc.enable()  # click parses it: any command may follow
                break
        from .cli import main as run_click

        run_click()
    except KeyboardInterrupt:
        sys.stderr.write("Interrupted.\n")
        raise SystemExit(130) from None
    finally:
        # The process ends next. Python's shutdown would walk every object it tracks for
        # reference cycles while freeing the modules: some 35 ms once dulwich and
        # ruamel.yaml are loaded, more than starting Python. Frozen objects are left out
        # of those walks; everything a shutdown must do still happens (atexit handlers,
        # flushing the standard streams, objects freed as their modules are cleared).
        # Every file and database xbrain writes is closed before its command returns.
        gc.freeze()


def _arm() -> frozenset[str] | None:
    """Register the fast exit of a SHORT command (before it imports anything, so every
    atexit handler it registers runs before this one); the file descriptors open now,
    or None when they cannot be listed (then the process ends as usual)."""
    import os

    try:
        before = frozenset(os.listdir("/proc/self/fd"))
    except OSError:  # not Linux: no cheap way to see what is open
        return None
    import atexit

    atexit.register(_leave)
    return before


def _leave() -> None:
    """The last atexit handler of a SHORT command: end the process now, skipping the
    teardown of every module and object (≈ 2.5 ms after a put), when that teardown has
    nothing left to do but free memory.

    Python's shutdown, in order: it waits for non-daemon threads, runs the atexit
    handlers (last registered first: this one was registered before the command ran, so
    every handler the command registered has run), flushes stdout and stderr, then clears
    the modules, which frees objects (and runs their ``__del__``). What that last step
    could still do for a write: close a file and flush its buffer, remove a git lock
    file, close a database. Each of those holds a file descriptor, so the process ends
    here only when no descriptor opened since the command started is still open, and
    once both standard streams are flushed; otherwise (and on any doubt) Python's
    shutdown proceeds as usual, with the same exit code."""
    import os
    import sys

    if not _ending:
        return
    code, before = _ending[0]
    try:
        if not frozenset(os.listdir("/proc/self/fd")) <= before:
            return
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):  # a stream that cannot be flushed: Python says so
        return
    os._exit(code)


def _unraisable(report: object) -> None:
    """Drop one report Python would print after xbrain's one line: on a full disk a git
    lock file whose flush failed is aborted again when it is collected, fails the same
    way, and "Exception ignored in … _GitFile.__del__" followed with a traceback (the
    leftover lock is cleared by the next write). Every other report is printed."""
    import sys

    from .errors import no_space

    exc = getattr(report, "exc_value", None)
    where = getattr(getattr(report, "object", None), "__module__", "") or ""
    if exc is not None and no_space(exc) and where.startswith("dulwich."):
        return
    sys.__unraisablehook__(report)  # type: ignore[arg-type]
