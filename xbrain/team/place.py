"""Where team stores live: one folder per team under the teams folder the caller names.

Cheap to import (recall and the hooks list the layers on every prompt): no click,
no git, no YAML.
"""

from __future__ import annotations

import os
import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["Layer", "team_layers", "validate_team_name"]

_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,39}", re.ASCII)


class Layer:
    """One team store: its name (``team:NAME`` in results) and its folder (a plain
    class: ``dataclasses`` and ``typing`` cost every prompt a few milliseconds)."""

    __slots__ = ("name", "path")

    def __init__(self, name: str, path: str) -> None:
        self.name = name
        self.path = path

    def __repr__(self) -> str:
        return f"Layer({self.name!r}, {self.path!r})"

    @property
    def label(self) -> str:
        """What each result of this layer says: ``team:NAME``."""
        return f"team:{self.name}"


def validate_team_name(name: str) -> str:
    """A team name: lower-case letters, digits, ``-`` and ``_``, at most 40, starting with
    a letter or digit (it names a folder and appears in every result as ``team:NAME``)."""
    from ..errors import InvalidInputError

    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise InvalidInputError(
            "Invalid team name; use 1-40 lower-case letters, digits, '-' or '_', "
            "starting with a letter or digit."
        )
    return name


def team_layers(root: str | Path | None) -> list[Layer]:
    """The team stores under ``root`` (sorted by name): folders with a valid name, not
    links, holding a repository. A missing or unreadable root has none."""
    if root is None:
        return []
    root = os.fspath(root)
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return []
    found = []
    for name in names:
        if not _NAME.fullmatch(name):
            continue  # a clone in progress (".name.clone-…"), a removal, anything else
        path = os.path.join(root, name)
        if os.path.islink(path) or not os.path.isdir(os.path.join(path, ".git")):
            continue
        found.append(Layer(name, path))
    return found
