"""Team memory: team stores read as layers beside the personal store (issue 47).

A team store is a normal xbrain store in its own repository, cloned through the same
hostile-tree gate as ``xbrain clone`` into ``<data>/teams/NAME`` (the front end names
the folder; nothing here reads the environment). ``manage`` adds, lists, pulls and
removes them; ``layers`` reads them beside the personal store; ``share`` proposes one
record to a team; ``review`` accepts or rejects proposals.

This package sits above the facade: it opens stores with ``Store`` and answers with
the same features' results, adding only which layer each came from.
"""

from __future__ import annotations

from .place import Layer, team_layers, validate_team_name

__all__ = ["Layer", "team_layers", "validate_team_name"]
