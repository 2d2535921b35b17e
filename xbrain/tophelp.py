"""``xbrain --help`` without click: the text click prints, kept in ``xbrain.helptext``.

Importing click and building the group costs more than three times Python's own start.
The top-level help is fixed text on any terminal at least 80 columns wide (and when
output is not a terminal), so it is printed from ``helptext``; a test keeps that text
equal to click's, and ``make helptext`` rewrites it. A narrower terminal gets click.
"""

from __future__ import annotations

import os
import sys

__all__ = ["run_help", "terminal_columns"]

_WIDE = 80  # click wraps help at min(columns, 80) - 2


def terminal_columns() -> int:
    """The width ``shutil.get_terminal_size`` reports, as click asks it: $COLUMNS, else
    the terminal of stdout, else 80."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or _WIDE


def run_help(args: list[str]) -> int | None:
    """Print the top-level help when click would print exactly it: the exit code, or None."""
    if args or terminal_columns() < _WIDE:
        return None
    from .helptext import TOP_HELP
    from .lightcli import write_stdout

    # text for a person: in stdout's encoding, a character it lacks shown as "?"
    encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
    return 0 if write_stdout(TOP_HELP.encode(encoding, "replace")) else 1
