"""The caller's working directory, also when it has been removed (a leaf: only ``os``).

An agent or a shell may stand in a folder that was deleted since (a finished temporary
worktree, a cleaned build directory): ``os.getcwd()`` then fails with "No such file or
directory", which made ``recall`` and every hook prompt fail. The folder is still named
by the shell's ``$PWD``, and that name is all that project scoping needs.
"""

from __future__ import annotations

import os

__all__ = ["working_directory"]


def working_directory() -> str:
    """The working directory; when it no longer exists, ``$PWD`` (if absolute), else
    ``/`` (no project's folder)."""
    try:
        return os.getcwd()
    except OSError:
        named = os.environ.get("PWD", "")
        return named if os.path.isabs(named) else "/"
