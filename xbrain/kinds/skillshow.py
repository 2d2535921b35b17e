"""What recall shows of a skill revision: Level 1 (instructions and manifest) and Level 2
(one component), built from checked bytes (:func:`xbrain.kinds.skill.read_file`)."""

from __future__ import annotations

from typing import Any

from ..core.view import View
from .skill import chosen, instructions, stored_revision
from .skillformat import SKILL_MD, parse_skill_md

__all__ = ["component", "level1", "level1_offered", "served"]


def served(state: dict[str, Any]) -> tuple[dict[str, Any] | None, bool]:
    """The revision recall serves an agent unasked (Level 0, Level 1 without a revision):
    the published one, else the latest that is not ``proposed`` (True: a fallback), else
    None. A proposed revision came from elsewhere (an import, an MCP save) and waits for
    the user's review: it is read only when asked for by its revision, never offered."""
    entry, fallback = chosen(state)
    if entry["state"] != "proposed":
        return entry, fallback
    for other in reversed(state["revisions"]):
        if other["state"] != "proposed":
            return other, True
    return None, True


def level1(
    view: View, state: dict[str, Any], entry: dict[str, Any], fallback: bool
) -> dict[str, Any]:
    """What Level 1 of recall shows of revision ``entry`` (also kept in the skill index,
    so both paths answer alike): ids, states, frontmatter, instructions, components."""
    return level1_offered(view, state, entry, fallback)[0]


def level1_offered(
    view: View, state: dict[str, Any], entry: dict[str, Any], fallback: bool
) -> tuple[dict[str, Any], bool]:
    """:func:`level1`, and whether automatic recall may offer the revision (False: its
    ``SKILL.md`` sets ``disable-model-invocation``, so it runs only when asked by name)."""
    slug = state["slug"]
    revision = stored_revision(view, slug, entry["id"])
    parsed = parse_skill_md(instructions(view, slug, revision))
    out: dict[str, Any] = {
        "slug": slug,
        "skill_id": state["id"],
        "revision_id": entry["id"],
        "revision_number": entry["number"],
        "state": entry["state"],
        "status": state["status"],
    }
    if fallback:
        out["fallback"] = "latest"
    out["canonical_hash"] = revision["canonical_hash"]
    out["frontmatter"] = parsed.frontmatter
    out["instructions"] = parsed.body
    out["files"] = [item for item in revision["files"] if item["path"] != SKILL_MD]
    return out, not parsed.manual


def component(slug: str, revision: str, item: dict[str, Any], data: bytes) -> dict[str, Any]:
    """What Level 2 shows of one file: its manifest line and its content (text as is,
    other bytes as base64)."""
    out = {"slug": slug, "revision_id": revision, **item}
    try:
        out.update(encoding="utf-8", content=data.decode("utf-8"))
    except UnicodeDecodeError:
        import base64

        out.update(encoding="base64", content=base64.b64encode(data).decode("ascii"))
    return out
