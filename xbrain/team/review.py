"""``xbrain team review NAME [accept|reject KEY]``: a team's proposals and their review.

Listing pulls the team first when it can (offline is normal: it then answers from the
last pull and says so) and shows each proposal's title and description, hidden
characters marked. A decision is made by a reviewer (the personal store's identity, named in the
team's ``team.reviewers``): the team is pulled first when it can be, the state change
committed with the reviewer's identity, and pushed. Order keeps a killed review safe:
an accept changes the record (a skill revision published; an entry shared before entries
landed active made active) before
the proposal says ``accepted`` — until then every read still hides it; a reject marks
the proposal first, then removes the record (a skill revision is deprecated: revisions
are immutable).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..core import DEFAULT_IDENTITY
from ..errors import ConflictError, InvalidInputError, NotFoundError
from ..kinds import skill as skill_kind
from ..store import Store
from ..timestamps import now_timestamp
from .glance import at_a_glance, refuse_hidden_fields
from .hidden import doubted, in_force, note_untrusted, proposals, refresh, untrusted
from .manage import pull_first, team_path
from .share import identity_of, push_team, write_proposal

__all__ = ["decide", "listing"]


def listing(
    root: Path,
    name: str,
    cache_dir: Path | None = None,
    identity: str | None = None,
    *,
    fetch: bool = False,
) -> dict[str, Any]:
    """The team's open proposals, its reviewers, and the decisions not trusted, each
    with its title and description as the team holds them. ``fetch``: pull the team
    first, as a decision does (``pull_first``: a team that cannot be reached gives the
    last pull's answer, with ``pulled: false`` and a ``note`` saying why; a pull refused
    is raised, nothing listed)."""
    path = team_path(root, name)
    stale: dict[str, Any] = {}
    if fetch:
        unreached = pull_first(root, name, "listed", cache_dir, identity)
        stale = {"pulled": True}
        if unreached is not None:
            stale = {
                "pulled": False,
                "note": f"Could not pull team {name}, so this is its last pull: "
                + unreached.message,
            }
    team = Store(path)
    with team.core.reading() as view:
        assert view is not None
        found = proposals(view)
    listed = in_force(path)
    open_ = [
        {**item, **at_a_glance(team, item)}
        for item in sorted(found, key=lambda i: (i["sharedAt"], i["key"]))
        if item["state"] == "proposed"
    ]
    doubts = [
        {**item, **at_a_glance(team, item)}
        if item.get("kind") in ("resource", "entry", "skill")
        else item
        for item in doubted(path)
    ]
    return {"team": name, "reviewers": listed, "proposals": open_, "untrusted": doubts, **stale}


def _find(
    found: list[dict[str, Any]], key: str, doubted: list[dict[str, Any]], team: Store
) -> dict[str, Any]:
    """The proposal ``key`` names: its key, or a record id or skill slug (the newest);
    else a record committed with no proposal by someone not a reviewer, as one."""
    exact = [item for item in found if item["key"] == key]
    if exact:
        return exact[0]
    named = sorted((i for i in found if i["id"] == key), key=lambda i: i["sharedAt"])
    if named:
        return named[-1]
    for item in doubted:
        if item.get("kind") in ("resource", "entry", "skill") and key in (
            item["key"],
            item["id"],
        ):
            return _as_proposal(item, team)
    raise NotFoundError(f"No proposal {key} in the team; see xbrain team review NAME.")


def _as_proposal(item: dict[str, Any], team: Store) -> dict[str, Any]:
    """A proposal for a record no reviewer vouches for (a skill's: its newest revision)."""
    key = item["id"]
    if item["kind"] == "skill":
        with team.core.reading() as view:
            assert view is not None
            state = skill_kind.read_state(view, item["id"])
        revisions = state["revisions"] if state is not None else []
        if not revisions:
            raise NotFoundError(f"Skill {item['id']} of the team has no revision.")
        key = str(revisions[-1]["id"])
    shown = {"key": key, "kind": item["kind"], "id": item["id"], "state": "proposed"}
    by = str(item.get("by") or "unknown")[:200]
    return {**shown, "sharedBy": by, "sharedAt": now_timestamp(), "synthetic": True}


def decide(
    personal: Store,
    root: Path,
    name: str,
    verb: str,
    keys: str | list[str],
    cache_dir: Path | None = None,
    reason: str | None = None,
) -> dict[str, Any]:
    """Accept or reject proposals ``keys`` of team ``name`` as its reviewer (every one
    checked before any is decided); ``reason``: why a reject (kept in the proposal)."""
    keys = [keys] if isinstance(keys, str) else list(dict.fromkeys(keys))
    if verb not in ("accept", "reject") or not keys:
        raise InvalidInputError("Review with accept or reject, and at least one key.")
    if reason is not None and (verb != "reject" or not _REASON.fullmatch(reason)):
        raise InvalidInputError("--reason goes with reject: one line of 1-200 characters.")
    path = team_path(root, name)
    personal.core.existing()
    who = identity_of(personal)
    pull_first(root, name, "decided", cache_dir, who)  # offline: on the last pull
    team = Store(path, cache_dir=cache_dir)
    team.core.identity = who
    with team.core.reading() as view:
        assert view is not None
        found = proposals(view)
    listed = in_force(path)
    items = [_find(found, key, doubted(path), team) for key in keys]
    if who not in listed:
        raise InvalidInputError(_not_reviewer(who, name, listed))
    for item in items:
        if verb == "accept":  # what the reviewer could not read is never trusted
            refuse_hidden_fields(team, name, item)
        doubted_state = item["key"] in untrusted(path)
        if not item.get("synthetic") and item["state"] != "proposed" and not doubted_state:
            raise ConflictError(f"Proposal {item['key']} is already {item['state']}.")
    shown = [_decide(team, path, item, verb, who, reason) for item in items]
    pushed = push_team(root, name, team, cache_dir, personal)
    with team.core.git() as git:
        head = git.head()
    refresh(path)
    one = {"decided": shown[0]} if len(shown) == 1 else {}
    return {"team": name, **one, "decisions": shown, "commit": head, **pushed}


_REASON = re.compile(r"[^\x00-\x1f\x7f]{1,200}")


def _not_reviewer(who: str, name: str, listed: list[str]) -> str:
    """Why ``who`` may not decide, and what to do: set the identity only when it looks
    like a reviewer's mistyped, or is still the default."""
    names = ", ".join(listed) or "none"
    said = f"{who} is not a reviewer of team {name} (its team.reviewers: {names})"
    parts = who.rstrip(">").split(" <")
    near = any(
        part.strip().lower() in other.rstrip(">").lower().split(" <")
        for part in parts
        for other in listed
    )
    if who == DEFAULT_IDENTITY or near:
        return (
            f"{said}; set your identity as listed there with xbrain config "
            "identity.name / identity.email."
        )
    return f"{said}; a reviewer of the team accepts or rejects it (or adds you to team.reviewers)."


def _decide(
    team: Store, path: Path, item: dict[str, Any], verb: str, who: str, reason: str | None
) -> dict[str, Any]:
    """One decision committed: the record's change and its proposal, in a safe order."""
    synthetic = item.pop("synthetic", False)
    state = "accepted" if verb == "accept" else "rejected"
    decided = {**item, "state": state, "reviewedBy": who, "reviewedAt": now_timestamp()}
    if reason is not None:
        decided["reason"] = reason
    subject = f"team review: {verb} {item['kind']} {item['id']}"
    if verb == "accept":
        if not synthetic:  # a record committed without a proposal already is as it is
            _apply(team, item, verb)
        write_proposal(team, decided, subject)
    else:
        write_proposal(team, decided, subject)
        _apply(team, item, verb)
    note_untrusted(path, {}, {item["key"]})
    keep = ("key", "kind", "id", "state", "reviewedBy", "reason")
    return {k: decided[k] for k in keep if k in decided}


def _apply(team: Store, item: dict[str, Any], verb: str) -> None:
    """The record's own change: entries and skill revisions have their own state."""
    kind, rid = item["kind"], item["id"]
    try:
        if kind == "entry":
            if verb == "accept":  # shared before entries landed active: made so now
                if team.entry_get(rid).get("status") != "active":
                    team.entry_status(rid, "active")
            else:
                team.entry_delete(rid)
        elif kind == "skill":
            team.skill_lifecycle("publish" if verb == "accept" else "deprecate", rid, item["key"])
        elif verb == "reject":
            team.delete(rid)
    except NotFoundError:
        pass  # a killed share left the proposal without its record: nothing to change
