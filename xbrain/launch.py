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

                run = getattr(importlib.import_module(f"{__package__}.{module}"), function)
                code = run(sys.argv[1 + len(words) :])
                if code is not None:
                    raise SystemExit(code)
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
