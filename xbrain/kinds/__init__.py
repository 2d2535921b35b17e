"""The kinds of record (and state file) a store holds, each registered from its own module.

To add a kind, write a module here that builds a ``RecordKind`` (or ``FileKind``) and
calls ``xbrain.core.registry.register``, and add it to the import list below. Neither the
core nor the other kinds change.
"""

from __future__ import annotations

from . import entry, proposal, resource, resourcefacts, skill, state, tombstone

__all__ = ["entry", "proposal", "resource", "resourcefacts", "skill", "state", "tombstone"]
