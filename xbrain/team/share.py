"""``xbrain share ID|SLUG --team NAME``: one record proposed to a team.

The record is copied from the personal store into the team's local clone as a proposal
(a ``proposals/<key>.yaml`` file and the record itself, committed with the sharer's
identity) and pushed. Order makes a killed share safe: for a resource or an entry the
proposal is committed before the record, so the record never appears in the team
without it (a reader hides every proposed id; an entry lands ``active``, so accepting
it changes only its proposal and the entry stays its author's commit); a skill's revision lands as
``proposed``, which no read serves, before its proposal. Sharing again completes what a
killed share left and adds nothing twice. A push the remote refuses (another member
pushed first) is pulled, merged and pushed again; a push that still fails is reported,
and the share stays committed in the team's clone for the next sync.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from ..codec import dump_yaml
from ..core import DEFAULT_IDENTITY
from ..errors import ConflictError, InvalidInputError, XbrainError
from ..kinds import proposal as proposal_kind
from ..remote.intake import dated_ahead
from ..store import Store
from ..timestamps import now_timestamp
from . import autosync
from .hidden import in_force, refresh
from .manage import pull, pull_first, team_path
from .syncstate import note_sync

__all__ = ["identity_of", "push_team", "share", "write_proposal"]

_ATTEMPTS = 3


def identity_of(personal: Store) -> str:
    """Who the member is: the personal store's commit identity (``identity.name`` and
    ``identity.email``)."""
    with personal.core.reading() as view:
        return view.config().identity if view is not None else DEFAULT_IDENTITY


def write_proposal(team: Store, proposal: dict[str, Any], subject: str) -> str | None:
    """Commit one proposal file (its bytes unchanged: no commit); the commit id."""
    with team.core.transaction("share") as txn:
        txn.write(proposal_kind.proposal_path(proposal["key"]), dump_yaml(proposal))
        txn.subject = subject
    return txn.commit_id


def push_team(
    root: Path,
    name: str,
    team: Store,
    cache_dir: Path | None = None,
    personal: Store | None = None,
) -> dict[str, Any]:
    """Push the team's clone; a refusal because another member pushed first is pulled,
    merged and pushed again (a few times). ``{pushed}``, or when it could not be pushed
    ``{pushed: false, error, code (the error's own exit code), note}``; the outcome is
    remembered for ``team list`` and ``status``, and with automatic sync on in the
    ``personal`` store, its background push (debounced, retried) is started for it."""
    error = None
    for _ in range(_ATTEMPTS):
        try:
            team.remote_push("origin", team=name)
        except XbrainError as exc:
            error = exc
            if exc.code not in ("conflict", "stale") or "lacks" not in exc.message:
                break
            try:
                pull(root, name, cache_dir, team.core.identity)
            except XbrainError as failed:
                error = failed
                break
            continue
        note_sync(team.path, lastPush=now_timestamp(), lastError=None, ahead=False)
        return {"pushed": True}
    assert error is not None
    note_sync(team.path, lastAttempt=now_timestamp(), lastError=error.message, ahead=True)
    if personal is not None and autosync.enabled(personal.path):
        autosync.start(personal.path, root, "push")  # sends what is ahead, retried
        later = f"the automatic push retries it shortly (or run xbrain team sync {name})"
    else:
        later = f"xbrain team sync {name} sends it (with sync.auto on, the automatic push)"
    kept = f"Not pushed: kept committed in this device's clone of team {name}; {later}."
    return {"pushed": False, "error": error.message, "code": error.exit_code, "note": kept}


def share(
    personal: Store,
    root: Path,
    name: str,
    what: str,
    *,
    revision: str | None = None,
    cache_dir: Path | None = None,
) -> dict[str, Any]:
    """Propose resource, entry or skill ``what`` (an id, or a skill's slug) to team
    ``name``; ``revision``: a skill's revision (default: its published one, else its
    head)."""
    path = team_path(root, name)
    personal.core.existing()
    who = identity_of(personal)
    pull_first(root, name, "shared", cache_dir, who)  # what it holds now; offline: the last pull
    team = Store(path, cache_dir=cache_dir)
    team.core.identity = who
    base = {"state": "proposed", "sharedBy": who, "sharedAt": now_timestamp()}
    if what.startswith(("resource_", "entry_")):
        if revision is not None:
            raise InvalidInputError("--revision goes with a skill's slug.")
        kind = "resource" if what.startswith("resource_") else "entry"
        record = personal.get(what) if kind == "resource" else personal.entry_get(what)
        proposal = {"key": what, "kind": kind, "id": what, **base}
        accepted = _accepted(team, what)
        if accepted is not None:
            if _same(team, kind, record):
                return _unchanged(name, accepted, team)
            if who not in in_force(path):  # a reviewer re-proposes it, then accepts it
                raise ConflictError(
                    f"{what} is already accepted in team {name} and yours differs; "
                    "sharing it again would hide the accepted version from the team "
                    f"until a review, so a reviewer of the team ({_names(path)}) shares "
                    "the change."
                )
        ahead = dated_ahead(kind, record)
        if ahead is not None:  # every member's pull would refuse it, and every pull after
            raise InvalidInputError(
                f"Refused to share {what} with team {name}: it is dated {ahead}, more than "
                "a day ahead of this machine's clock, and every member's pull would refuse "
                "it; nothing changed. Write it again dated now, then share it."
            )
        write_proposal(team, proposal, f"share: propose {kind} {what}")
        if kind == "resource":
            team.put([record])
        else:
            # in force as written: the proposal hides it until a reviewer accepts it,
            # so the accept changes no record and the entry stays its author's commit
            team.entry_put([{**record, "status": "active"}])
    else:
        proposal = _share_skill(personal, team, what, revision, base)
        if proposal.get("unchanged"):
            return _unchanged(name, proposal, team)
    shown = {k: proposal[k] for k in ("key", "kind", "id", "state", "sharedBy")}
    pushed = push_team(root, name, team, cache_dir, personal)
    with team.core.git() as git:
        head = git.head()
    refresh(path)
    return {"team": name, "shared": shown, "commit": head, **pushed}


def _share_skill(
    personal: Store, team: Store, slug: str, revision: str | None, base: dict[str, Any]
) -> dict[str, Any]:
    """Export the revision as a capsule (its files, hashes and provenance) and import it
    into the team as ``proposed``; then its proposal, keyed by the team's revision."""
    with tempfile.TemporaryDirectory(prefix="xbrain-share-") as scratch:
        capsule = Path(scratch) / f"{slug}.zip"
        personal.skill_export(slug, capsule, revision)
        imported = team.skill_import(capsule)
    rev = imported.get("revision_id") or imported.get("revision", {}).get("id")
    if not isinstance(rev, str):
        raise InvalidInputError(f"The team did not take skill {slug}.")
    accepted = _accepted(team, rev)
    if accepted is not None:  # this very revision was accepted already
        return {**accepted, "unchanged": True}
    proposal = {"key": rev, "kind": "skill", "id": slug, "revision": rev, **base}
    write_proposal(team, proposal, f"share: propose skill {slug} revision {rev}")
    return proposal


def _accepted(team: Store, key: str) -> dict[str, Any] | None:
    """The team's proposal ``key`` when a reviewer accepted it."""
    with team.core.reading() as view:
        data = view.read(proposal_kind.proposal_path(key)) if view is not None else None
    try:
        item = proposal_kind.parse_proposal(data) if data is not None else None
    except Exception:
        return None
    return item if item is not None and item["state"] == "accepted" else None


_VOLATILE = ("status", "updatedAt")


def _same(team: Store, kind: str, record: dict[str, Any]) -> bool:
    """True when the team holds ``record`` as it is (an entry's review state aside)."""
    try:
        held = team.get(record["id"]) if kind == "resource" else team.entry_get(record["id"])
    except XbrainError:
        return False
    if kind == "resource":
        return held == record
    plain = {k: v for k, v in record.items() if k not in _VOLATILE}
    return plain == {k: v for k, v in held.items() if k not in _VOLATILE}


def _unchanged(name: str, accepted: dict[str, Any], team: Store) -> dict[str, Any]:
    """A share of what the team already accepted: nothing is written or pushed."""
    shown = {k: accepted[k] for k in ("key", "kind", "id", "state", "sharedBy")}
    with team.core.git() as git:
        head = git.head()
    return {
        "team": name,
        "shared": shown,
        "commit": head,
        "pushed": False,
        "unchanged": True,
        "message": f"{accepted['id']} is already accepted in team {name}: nothing to share.",
    }


def _names(path: Path) -> str:
    return ", ".join(in_force(path)) or "none named"
