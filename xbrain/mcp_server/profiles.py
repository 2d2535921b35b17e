"""``xbrain mcp --tools``: which tools one client is served, by name or by profile.

A client sees (``tools/list``) and calls only these; any other is an unknown tool to it.
Profiles: ``all`` (the default) and ``read-only`` (the tools that change nothing).
"""

from __future__ import annotations

from ..errors import UsageError
from .tools import TOOLS

__all__ = ["PROFILES", "tool_profile"]

PROFILES = {
    "all": tuple(tool.name for tool in TOOLS),
    "read-only": tuple(tool.name for tool in TOOLS if tool.read_only),
}


def tool_profile(spec: str | None) -> frozenset[str] | None:
    """The tools ``--tools`` names: comma-separated tool names and profile names; None
    (not given) is every tool. An unknown name is a UsageError (exit 2)."""
    if spec is None:
        return None
    names: set[str] = set()
    for part in (piece.strip() for piece in spec.split(",")):
        if part in PROFILES:
            names.update(PROFILES[part])
        elif part in PROFILES["all"]:
            names.add(part)
        else:
            known = ", ".join((*PROFILES, *PROFILES["all"]))
            raise UsageError(f"--tools: unknown tool or profile {part[:40]!r}; use {known}.")
    return frozenset(names)
