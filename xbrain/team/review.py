"""``xbrain team review NAME [accept|reject KEY]``: a team's proposals and their review.

Listing reads the team's local layer (offline is normal; ``team pull`` first to see the
newest). A decision is made by a reviewer (the personal store's identity, named in the
team's ``team.reviewers``): the team is pulled first when it can be, the state change
committed with the reviewer's identity, and pushed. Order keeps a killed review safe:
an accept changes the record (an entry made active, a skill revision published) before
the proposal says ``accepted`` — until then every read still hides it; a reject marks
the proposal first, then removes the record (a skill revision is deprecated: revisions
are immutable).
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from ..errors import ConflictError, InvalidInputError, NotFoundError, XbrainError
from ..store import Store
from ..timestamps import now_timestamp
from .hidden import note_untrusted, proposals, refresh, reviewers, untrusted
from .manage import pull, team_path
from .share import identity_of, push_team, write_proposal

__all__ = ["decide", "listing"]


def _title(team: Store, item: dict[str, Any]) -> str:
    """What a reviewer recognizes a proposal by."""
    try:
        if item["kind"] == "resource":
            return str(team.get(item["id"]).get("title", ""))
        if item["kind"] == "entry":
            return str(team.entry_get(item["id"]).get("name", ""))
    except XbrainError:
        return ""
    return str(item["id"])


def listing(root: Path, name: str) -> dict[str, Any]:
    """The team's open proposals, its reviewers, and the decisions not trusted."""
    path = team_path(root, name)
    team = Store(path)
    with team.core.reading() as view:
        assert view is not None
        found = proposals(view)
        listed = reviewers(view)
    open_ = [
        {**item, "title": _title(team, item)}
        for item in sorted(found, key=lambda i: (i["sharedAt"], i["key"]))
        if item["state"] == "proposed"
    ]
    return {
        "team": name,
        "reviewers": listed,
        "proposals": open_,
        "untrusted": sorted(untrusted(path).values(), key=lambda i: str(i.get("key"))),
    }


def _find(found: list[dict[str, Any]], key: str) -> dict[str, Any]:
    """The proposal ``key`` names: its key, or a record id or skill slug (the newest)."""
    exact = [item for item in found if item["key"] == key]
    if exact:
        return exact[0]
    named = sorted((i for i in found if i["id"] == key), key=lambda i: i["sharedAt"])
    if named:
        return named[-1]
    raise NotFoundError(f"No proposal {key} in the team; see xbrain team review NAME.")


def decide(
    personal: Store,
    root: Path,
    name: str,
    verb: str,
    key: str,
    cache_dir: Path | None = None,
) -> dict[str, Any]:
    """Accept or reject proposal ``key`` of team ``name`` as its reviewer."""
    if verb not in ("accept", "reject"):
        raise InvalidInputError("Review with accept or reject.")
    path = team_path(root, name)
    personal.core.existing()
    who = identity_of(personal)
    with contextlib.suppress(XbrainError):  # decide on the newest; offline: the last pull
        pull(root, name, cache_dir)
    team = Store(path, cache_dir=cache_dir)
    team.core.identity = who
    with team.core.reading() as view:
        assert view is not None
        listed = reviewers(view)
        item = _find(proposals(view), key)
    if who not in listed:
        raise InvalidInputError(
            f"{who} is not a reviewer of team {name} (its team.reviewers: "
            f"{', '.join(listed) or 'none'}); set your identity with xbrain config "
            "identity.name / identity.email."
        )
    if item["state"] != "proposed" and item["key"] not in untrusted(path):
        raise ConflictError(f"Proposal {item['key']} is already {item['state']}.")
    state = "accepted" if verb == "accept" else "rejected"
    decided = {**item, "state": state, "reviewedBy": who, "reviewedAt": now_timestamp()}
    subject = f"team review: {verb} {item['kind']} {item['id']}"
    if verb == "accept":
        _apply(team, item, verb)
        write_proposal(team, decided, subject)
    else:
        write_proposal(team, decided, subject)
        _apply(team, item, verb)
    note_untrusted(path, {}, {item["key"]})
    pushed = push_team(root, name, team, cache_dir)
    with team.core.git() as git:
        head = git.head()
    refresh(path)
    shown = {k: decided[k] for k in ("key", "kind", "id", "state", "reviewedBy")}
    return {"team": name, "decided": shown, "commit": head, **pushed}


def _apply(team: Store, item: dict[str, Any], verb: str) -> None:
    """The record's own change: entries and skill revisions have their own state."""
    kind, rid = item["kind"], item["id"]
    try:
        if kind == "entry":
            if verb == "accept":
                team.entry_status(rid, "active")
            else:
                team.entry_delete(rid)
        elif kind == "skill":
            team.skill_lifecycle("publish" if verb == "accept" else "deprecate", rid, item["key"])
        elif verb == "reject":
            team.delete(rid)
    except NotFoundError:
        pass  # a killed share left the proposal without its record: nothing to change
