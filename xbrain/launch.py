"""The console script's first step: a Ctrl-C while xbrain is still loading is one line.

Kept tiny (no imports at module level) so the window before the handler is as small as
Python allows; everything else loads inside ``main``.
"""

from __future__ import annotations


def main() -> None:
    """Load the CLI and run it; an interrupt at any point exits 130 with one line."""
    import sys

    try:
        from .cli import main as run

        run()
    except KeyboardInterrupt:
        sys.stderr.write("Interrupted.\n")
        raise SystemExit(130) from None
