"""What a reviewer reads of a proposal or an untrusted record at a glance.

``team review NAME`` and the viewer's review queue list each one by its short fields
(a resource's title; an entry's name, description and one-liner; a skill's name and
description), every hidden character marked (``<U+202E>``), so what is accepted is what
was read. An accept refuses a record whose short fields hold such a character, as
``put``, ``entry put`` and ``skill save`` refuse them: once trusted, its title is what
an agent is served.
"""

from __future__ import annotations

from typing import Any

from ..errors import InvalidInputError, XbrainError
from ..kinds import skill as skill_kind
from ..kinds.skillformat import parse_skill_md
from ..store import Store
from ..text import mark_hidden, refuse_hidden

__all__ = ["SHORT_FIELDS", "at_a_glance", "refuse_hidden_fields", "short_fields"]

# the fields put / entry put / skill save hold to no hidden characters, by kind
SHORT_FIELDS = {
    "resource": ("title",),
    "entry": ("name", "description", "oneLiner"),
    "skill": ("description",),
}


def short_fields(team: Store, item: dict[str, Any]) -> dict[str, str]:
    """Proposal or untrusted record ``item``'s short fields as the team holds them
    (a skill's name too); empty when the record is gone or unreadable."""
    kind, rid = item.get("kind"), str(item.get("id", ""))
    try:
        if kind == "resource":
            record = team.get(rid)
        elif kind == "entry":
            record = team.entry_get(rid)
        elif kind == "skill":
            record = _skill(team, rid, str(item.get("key", "")))
        else:
            return {}
    except (XbrainError, KeyError, ValueError):
        return {}
    wanted = ("name", *SHORT_FIELDS[kind]) if kind == "skill" else SHORT_FIELDS[kind]
    return {field: record[field] for field in wanted if isinstance(record.get(field), str)}


def _skill(team: Store, slug: str, key: str) -> dict[str, Any]:
    """The frontmatter of skill ``slug``'s revision ``key`` (else its newest)."""
    with team.core.reading() as view:
        if view is None:
            return {}
        state = skill_kind.read_state(view, slug)
        if state is None or not state["revisions"]:
            return {}
        chosen = next((r for r in state["revisions"] if r["id"] == key), state["revisions"][-1])
        revision = skill_kind.stored_revision(view, slug, chosen["id"])
        return dict(parse_skill_md(skill_kind.instructions(view, slug, revision)).frontmatter)


def at_a_glance(team: Store, item: dict[str, Any]) -> dict[str, str]:
    """``title`` (a resource's title, an entry's or skill's name) and ``description``
    (an entry's or skill's), hidden characters marked; absent when there is none."""
    found = short_fields(team, item)
    shown = {"title": found.get("title") or found.get("name") or ""}
    if "description" in found:
        shown["description"] = found["description"]
    return {key: mark_hidden(value) for key, value in shown.items()}


def refuse_hidden_fields(team: Store, name: str, item: dict[str, Any]) -> None:
    """Refuse to accept ``item`` when a short field holds a hidden character (exit 4)."""
    found = short_fields(team, item)
    for field in SHORT_FIELDS.get(str(item.get("kind")), ()):
        try:
            refuse_hidden(found.get(field), field)
        except InvalidInputError as exc:
            raise InvalidInputError(
                f"Cannot accept {item['kind']} {item['id']} in team {name}: {exc.message} "
                "Nothing changed; reject it, or have it shared again without it."
            ) from None
