"""Routing by the file a tool names (SPEC §13): an entry's ``paths`` globs against that
file, relative to the project root.

The project root is the nearest folder at or above the working directory that holds a
``.git`` (a checkout, a linked worktree, a submodule), else the working directory. A
file named relatively is taken from the working directory; a file outside the root
matches nothing. Paths are compared as written (``..`` folded, no link followed: the
file may not exist yet, and a hostile link must not steer routing).

Globs follow ``.gitignore``'s rules (git's wildmatch), case-sensitively as git and Linux
do: ``*`` is any run of characters within one folder name, ``?`` one character,
``[abc]``/``[a-z]``/``[!a]`` a class, ``\\`` quotes the next character; ``**`` as a
whole segment is any number of folders (``a/**/b``, ``**/x``, ``x/**``). A glob whose
only ``/`` is a trailing one matches the name at any depth (``*.sql``); any other ``/``
anchors it at the root (a leading one only anchors). A glob that names a folder matches
every file in it (``migrations/``). ``!glob`` takes back what an earlier glob of the
same entry matched: the last glob that matches decides. No library: pathspec costs a
hook ≈ 30 ms to import, and a glob is compiled once (``re``).
"""

from __future__ import annotations

import os
import re

__all__ = ["FILE_TOOLS", "matching_glob", "project_root", "relative_file"]

# The tools that name one file, and the key of their input that holds it.
FILE_TOOLS = {
    "Edit": "file_path",
    "Write": "file_path",
    "MultiEdit": "file_path",
    "Read": "file_path",
    "NotebookEdit": "notebook_path",
}
MAX_PATH = 4096
_COMPILED: dict[str, tuple[re.Pattern[str], bool] | None] = {}


def project_root(cwd: str) -> str:
    """The nearest folder at or above ``cwd`` (absolute, normalized) holding ``.git``,
    else ``cwd`` itself."""
    folder = cwd
    for _ in range(64):
        try:
            if os.path.lexists(os.path.join(folder, ".git")):
                return folder
        except (OSError, ValueError):
            break
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    return cwd


def relative_file(file: str, cwd: str) -> str | None:
    """``file`` relative to the project root of ``cwd``, with ``/`` between folders;
    None when it is outside the root or no usable path."""
    if not file or len(file) > MAX_PATH or "\0" in file or not os.path.isabs(cwd):
        return None
    base = os.path.normpath(cwd)
    root = project_root(base)
    path = os.path.normpath(os.path.join(base, file))
    prefix = root.rstrip("/") + "/"
    if not path.startswith(prefix):
        return None
    return path[len(prefix) :] or None


def matching_glob(globs: list[str], path: str) -> str | None:
    """The glob of ``globs`` that routes ``path`` to its entry, or None (the last glob
    that matches decides; a ``!glob`` that matches last means no)."""
    found = None
    for glob in globs:
        compiled = _COMPILED.get(glob)
        if compiled is None and glob not in _COMPILED:
            compiled = _COMPILED[glob] = _compile(glob)
        if compiled is not None and compiled[0].fullmatch(path):
            found = None if compiled[1] else glob
    return found


def _compile(glob: str) -> tuple[re.Pattern[str], bool] | None:
    """A glob as a regular expression over a whole relative path, and whether it is a
    ``!`` one; None for a glob that matches nothing (empty, a ``#`` comment, a class
    that does not close or runs backwards)."""
    negate = glob.startswith("!")
    if negate:
        glob = glob[1:]
    if not glob or glob.startswith("#") or glob == "/":
        return None
    folder_only = glob.endswith("/") and not glob.endswith("\\/")
    segments = glob.rstrip("/").split("/") if folder_only else glob.split("/")
    anchored = len(segments) > 1
    if segments[0] == "":  # a leading /: anchored, nothing more
        segments = segments[1:]
    regex = "" if anchored else "(?:[^/]+/)*"
    try:
        for i, segment in enumerate(segments):
            last = i == len(segments) - 1
            if segment != "**":
                regex += _segment(segment) + ("" if last else "/")
            elif not last:
                regex += "(?:[^/]+/)*"
            else:  # everything below (a lone `**/`: below some folder, as git reads it)
                regex += ".+/.+" if folder_only and i == 0 else ".+"
        if segments[-1] != "**":
            regex += "/.+" if folder_only else "(?:/.+)?"  # a folder's files match too
        return re.compile(regex, re.DOTALL), negate
    except re.error:
        return None


def _segment(segment: str) -> str:
    """One folder or file name of a glob as a regular expression (never across ``/``)."""
    out = []
    i, n = 0, len(segment)
    while i < n:
        char = segment[i]
        i += 1
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "\\" and i < n:
            out.append(re.escape(segment[i]))
            i += 1
        elif char == "[":
            i, regex = _bracket(segment, i)
            out.append(regex)
        else:
            out.append(re.escape(char))
    return "".join(out)


def _bracket(segment: str, start: int) -> tuple[int, str]:
    """The class that opens before ``start``: (where it ends, its regex); re.error when
    it does not close (git's wildmatch then matches nothing)."""
    i = start
    negate = i < len(segment) and segment[i] in "!^"
    if negate:
        i += 1
    body: list[str] = []
    first = True
    while i < len(segment):
        char = segment[i]
        if char == "]" and not first:
            inner = "".join(body)
            return i + 1, f"[^/{inner}]" if negate else f"(?!/)[{inner}]"
        if char == "\\" and i + 1 < len(segment):
            i += 1
            char = segment[i]
        body.append("-" if char == "-" and body and i + 1 < len(segment) else _escape(char))
        first = False
        i += 1
    raise re.error("an unclosed [")


def _escape(char: str) -> str:
    """A character as itself inside a regex class."""
    return "\\" + char if char in "\\^]-[" else char
