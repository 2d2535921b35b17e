"""The skills of a memex-style export: ``skills/<name>/`` holding a revision's exact files.

``entry export`` writes each skill beside the rules and memories, so the folder imports
back (``entry import``) with nothing lost: the revision recall shows (the published one,
else the head), every file byte for byte, read through the checked reads of
:mod:`xbrain.kinds.skill`. The folder is named as the one it was imported from when the
revision remembers a plain folder name, else by the skill's slug.
"""

from __future__ import annotations

import re
from typing import Any

from ..core import View
from ..kinds import skill as kind

__all__ = ["skill_files"]

_PLAIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


def skill_files(view: View) -> tuple[dict[str, bytes], set[str]]:
    """``skills/<name>/<path>`` → bytes of every skill's shown revision at ``view``, and
    which of those paths its manifest marks executable."""
    out: dict[str, bytes] = {}
    executable: set[str] = set()
    names: set[str] = set()
    for slug in kind.slugs(view):
        state = kind.read_state(view, slug)
        if state is None:
            continue
        entry, _ = kind.chosen(state)
        revision = kind.stored_revision(view, slug, entry["id"])
        name = _folder(revision["source"], slug)
        if name.lower() in names:  # two skills imported from folders of one name
            name = slug
        names.add(name.lower())
        for path, data in kind.revision_files(view, slug, revision):
            out[f"skills/{name}/{path}"] = data
        marked = (item["path"] for item in revision["files"] if item.get("executable"))
        executable.update(f"skills/{name}/{path}" for path in marked)
    return out, executable


def _folder(source: dict[str, Any], slug: str) -> str:
    path = source.get("path")
    if source.get("type") != "file" or not isinstance(path, str) or not _PLAIN.fullmatch(path):
        return slug
    return slug if path.lower().endswith((".md", ".zip")) else path
