"""The console script's first step: a Ctrl-C while xbrain is still loading is one line.

Kept tiny (no imports at module level) so the window before the handler is as small as
Python allows; everything else loads inside ``main``.
"""

from __future__ import annotations


def main() -> None:
    """Load the CLI and run it; an interrupt at any point exits 130 with one line."""
    import sys

    try:
        # the commands agents and hooks run most load without click when they can
        if sys.argv[1:2] == ["recall"]:
            from .lightcli import run_recall

            code = run_recall(sys.argv[2:])
            if code is not None:
                raise SystemExit(code)
        elif sys.argv[1:2] == ["search"]:
            from .lightcli import run_search

            code = run_search(sys.argv[2:])
            if code is not None:
                raise SystemExit(code)
        elif sys.argv[1:2] == ["hook"]:
            from .hookcli import run_hook

            code = run_hook(sys.argv[2:])
            if code is not None:
                raise SystemExit(code)
        from .cli import main as run

        run()
    except KeyboardInterrupt:
        sys.stderr.write("Interrupted.\n")
        raise SystemExit(130) from None
