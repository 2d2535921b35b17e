"""What a pull brought, said plainly: the skill revisions and publications, the entries and
how many resources a remote's commits changed here.

A remote may add revisions, publish them and write rules (another device of yours does
exactly that), so none of it is refused; but none of it should arrive unseen either —
a pull lists it, so a person or an agent can look before recall uses it.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any

from ..core import View
from ..kinds import entry as entry_kind
from ..kinds import skill as skill_kind

__all__ = ["received"]


def _published(view: View, slug: str) -> str | None:
    state = skill_kind.read_state(view, slug)
    if state is None:
        return None
    return next((e["id"] for e in state["revisions"] if e["state"] == "published"), None)


def received(before: View, after: View, paths: list[str]) -> dict[str, Any]:
    """What changed from ``before`` to ``after`` among ``paths`` (the pull's changed files):
    new skill revisions (with their state now), skills whose published revision changed,
    entries added or changed, and the number of resource files changed."""
    revisions: list[dict[str, Any]] = []
    published: list[dict[str, Any]] = []
    entries: list[dict[str, Any]] = []
    resources = 0
    for path in sorted(paths):
        parts = path.split("/")
        if parts[0] == skill_kind.DIRECTORY and len(parts) == 5 and parts[4] == "revision.yaml":
            if before.read(path) is None:
                slug, rev = parts[1], parts[3]
                state = skill_kind.read_state(after, slug)
                now = next(
                    (e["state"] for e in (state or {}).get("revisions", []) if e["id"] == rev), None
                )
                revisions.append({"slug": slug, "revision": rev, "state": now})
        elif parts[0] == skill_kind.DIRECTORY and len(parts) == 3 and parts[2] == "skill.yaml":
            new = _published(after, parts[1])
            if new is not None and new != _published(before, parts[1]):
                published.append({"slug": parts[1], "revision": new})
        elif parts[0] == entry_kind.DIRECTORY and path.endswith(".yaml"):
            entry = entry_kind.get(after, PurePosixPath(path).stem)
            if entry is not None:
                brief = {k: entry[k] for k in ("id", "kind", "name", "status")}
                entries.append({**brief, "trust": entry["trust"]})
        elif parts[0] in ("resources", "tombstones"):
            resources += 1
    return {
        "revisions": revisions,
        "published": published,
        "entries": entries,
        "resources": resources,
    }
