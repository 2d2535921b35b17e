"""What a team layer never shows to reads that route into an agent's context: records
still proposed (or rejected), skills without a published revision, and accepts the team's
reviewers did not make (recorded when they arrive, by ``trust.check_arrivals``); and
each record's provenance (who committed it last, when).

Worked out once per team commit into ``.git/xbrain/team-layer.json`` (device-local,
derived; :mod:`.derived` reads it), so a prompt reads one file per team, never git.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

from ..core import Core, View
from ..kinds import proposal as proposal_kind
from ..kinds import skill as skill_kind
from ..search.query import main_head

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .history import Memo

__all__ = [
    "doubted",
    "hidden_ids",
    "history_memo",
    "in_force",
    "note_untrusted",
    "proposals",
    "refresh",
    "reviewers",
    "untrusted",
]

_UNTRUSTED = "team-untrusted.json"
_HISTORY = "team-history.json"  # what the history audit worked out, by commit
_MAX = 32 << 20


def _read_json(path: Path) -> Any:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as handle:
            data = handle.read(_MAX + 1)
        return json.loads(data) if len(data) <= _MAX else None
    except (OSError, ValueError):
        return None


def _write_json(path: Path, value: Any) -> None:
    temp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(value, handle, sort_keys=True)
        os.replace(temp, path)
    with contextlib.suppress(OSError):
        temp.unlink()


def untrusted(store: Path) -> dict[str, dict[str, Any]]:
    """key → the untrusted state change this device saw arrive (who made it, when)."""
    value = _read_json(store / ".git" / "xbrain" / _UNTRUSTED)
    return value if isinstance(value, dict) else {}


def note_untrusted(store: Path, found: dict[str, dict[str, Any]], cleared: set[str]) -> None:
    """Remember state changes by non-reviewers (and forget those a reviewer made since)."""
    from .derived import layer_file

    known = {k: v for k, v in untrusted(store).items() if k not in cleared}
    known.update(found)
    _write_json(store / ".git" / "xbrain" / _UNTRUSTED, known)
    kept = _read_json(Path(layer_file(store)))
    if isinstance(kept, dict):  # what it hides is worked out again; its provenance kept
        _write_json(Path(layer_file(store)), {**kept, "commit": None})


def reviewers(view: View) -> list[str]:
    """The team's reviewers as ``team.reviewers`` in its ``xbrain.yaml`` names them
    (the list in force is :func:`in_force`)."""
    from .history import listed_reviewers

    return listed_reviewers(view)


def proposals(view: View) -> list[dict[str, Any]]:
    """Every proposal file of the team store at ``view`` (unreadable ones left out)."""
    found = []
    for path, _ in view.snap.files(proposal_kind.DIRECTORY):
        data = view.read(path)
        if data is None:
            continue
        try:
            value = proposal_kind.parse_proposal(data)
        except Exception:
            continue
        if proposal_kind.proposal_path(value["key"]) == path:
            found.append(value)
    return found


def _work_out(store: Path) -> list[str]:
    core = Core(store)
    with core.reading() as view:
        if view is None:
            return []
        hide: set[str] = set()
        doubted = untrusted(store)
        for item in proposals(view):
            if item["state"] != "accepted" or item["key"] in doubted:
                hide.add(item["id"] if item["kind"] != "skill" else f"skill:{item['id']}")
        for path, _ in view.snap.files(skill_kind.DIRECTORY):
            if not path.endswith("/skill.yaml") or path.count("/") != 2:
                continue
            slug = path.split("/")[1]
            try:
                state = skill_kind.read_state(view, slug)
            except Exception:
                state = None
            if (
                state is None
                or state["status"] != "active"
                or not any(r["state"] == "published" for r in state["revisions"])
            ):
                hide.add(f"skill:{slug}")
    return sorted(hide)


def refresh(store: str | Path) -> dict[str, Any]:
    """Work out the layer's derived file for its current head (kept when it already
    is): what it hides, its provenance, the reviewers in force and what no reviewer
    vouches for (:mod:`.history`)."""
    from .derived import layer_file, read_layer

    store = Path(store)
    head = main_head(store / ".git")
    kept = read_layer(store, head)
    if kept is not None or head is None:
        return kept or {"hidden": [], "provenance": {}, "reviewers": [], "untrusted": []}
    from ..core import CommitId
    from .history import audit

    with Core(store).reading() as view:
        found = proposals(view) if view is not None else []
    memo = history_memo(store)
    with Core(store).git() as git:
        checked = audit(git, CommitId(head), found, memo)
    _write_json(store / ".git" / "xbrain" / _HISTORY, memo.dump())
    value = {
        "commit": head,
        "hidden": sorted(set(_work_out(store)) | checked.hidden),
        "provenanceAt": head,
        "provenance": checked.provenance,
        "reviewers": checked.reviewers,
        "untrusted": checked.untrusted,
    }
    _write_json(Path(layer_file(store)), value)
    return value


def history_memo(store: str | Path) -> Memo:
    """What the team's history audits worked out so far, by commit (empty when none)."""
    from .history import Memo

    return Memo(_read_json(Path(store) / ".git" / "xbrain" / _HISTORY))


def hidden_ids(store: str | Path) -> frozenset[str]:
    """The ids (``skill:SLUG`` for skills) a read of this team layer leaves out."""
    return frozenset(str(x) for x in refresh(store)["hidden"])


def in_force(store: str | Path) -> list[str]:
    """The team's reviewers in force at its head: a change of ``team.reviewers`` counts
    only when a reviewer of the list before it made it (:mod:`.history`)."""
    return [str(x) for x in refresh(store).get("reviewers", [])]


def doubted(store: str | Path) -> list[dict[str, Any]]:
    """Every record and reviewer change at the head no reviewer vouches for, and the
    state changes by non-reviewers this device saw arrive."""
    seen = {str(v.get("key")): v for v in untrusted(Path(store)).values()}
    for item in refresh(store).get("untrusted", []):
        seen.setdefault(str(item.get("key")), item)
    return sorted(seen.values(), key=lambda i: str(i.get("key")))
