"""Who changed a proposal's state, checked when a team's commits arrive (add, pull).

A proposal accepted or rejected by someone the team's ``team.reviewers`` does not name
(as the team listed them before these commits: naming yourself and accepting in one
push does not count) is reported as ``untrusted`` and stays hidden from every read
until a reviewer decides it again. Identities are the commits' own, as git records
them; the git host's permissions remain the real gate.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..core import CommitId, Core, View
from ..kinds import proposal as proposal_kind
from .hidden import history_memo, note_untrusted
from .history import last_changes, reviewers_at

__all__ = ["check_arrivals"]


def check_arrivals(store: Path, old: str | None, new: str | None) -> list[dict[str, Any]]:
    """The state changes that arrived between ``old`` and ``new`` by non-reviewers
    (remembered for reads; a reviewer's later decision clears them)."""
    if new is None or old == new:
        return []
    found: dict[str, dict[str, Any]] = {}
    cleared: set[str] = set()
    head, base = CommitId(new), CommitId(old) if old else None
    memo = history_memo(store)
    with Core(store).git() as git:
        now = View(git.snapshot(head))
        trusted = set(reviewers_at(git, base or head, memo))
        decided: dict[str, dict[str, Any]] = {}
        for path in git.changed_files(base, head, proposal_kind.DIRECTORY):
            data = now.read(path)
            if data is None:
                continue
            try:
                item = proposal_kind.parse_proposal(data)
            except Exception:
                continue
            if item["state"] != "proposed":  # a share is no decision
                decided[path] = item
        last = last_changes(git, head, set(decided), memo) if decided else {}
        for path, item in decided.items():
            change = last.get(path)
            who = change.author if change is not None else "unknown"
            if who in trusted:
                cleared.add(item["key"])
                continue
            found[item["key"]] = {
                "key": item["key"],
                "kind": item["kind"],
                "id": item["id"],
                "state": item["state"],
                "by": who,
                "commit": str(change.id) if change is not None else None,
                "reason": "not a reviewer of this team",
            }
    if found or cleared:
        note_untrusted(store, found, cleared)
    return list(found.values())
