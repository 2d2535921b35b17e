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

from ..codec import load_yaml
from ..core import Core, View, layout
from ..kinds import proposal as proposal_kind
from ..kinds import skill as skill_kind
from ..search.query import main_head

__all__ = ["hidden_ids", "note_untrusted", "proposals", "refresh", "reviewers", "untrusted"]

_UNTRUSTED = "team-untrusted.json"
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
    """The team's reviewers (``team.reviewers`` in its ``xbrain.yaml``)."""
    try:
        raw = load_yaml(view.read(layout.MARKER) or b"")
        listed = raw.get("team", {}).get("reviewers", []) if isinstance(raw, dict) else []
    except Exception:
        return []
    return [str(x) for x in listed] if isinstance(listed, list) else []


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


def _key(path: str) -> str | None:
    """The record a path belongs to: a resource or entry id, ``skill:SLUG``."""
    parts = path.split("/")
    if parts[0] in ("resources", "entries") and len(parts) == 3:
        return parts[2].removesuffix(".yaml")
    if parts[0] == skill_kind.DIRECTORY and len(parts) > 2:
        return f"skill:{parts[1]}"
    return None


def _provenance(git: Any, head: str, known: dict[str, Any] | None) -> dict[str, Any]:
    """key → [committer, epoch, commit] of the last first-parent commit that changed
    the record; ``known`` (worked out at an older commit) is extended by the walk."""
    from ..core import CommitId

    stop = known.get("provenanceAt") if known else None
    assigned: dict[str, list[Any]] = {}
    commit: Any = CommitId(head)
    reached = False
    for _ in range(_SCAN):
        if commit == stop:
            reached = True
            break
        info = git.commit_info(commit)
        parent = info.parents[0] if info.parents else None
        for path in git.changed_files(parent, commit):
            key = _key(path)
            if key is not None and key not in assigned:
                assigned[key] = [info.author, info.time, str(info.id)]
        if parent is None:
            break
        commit = parent
    if reached and known is not None:
        return {**known.get("provenance", {}), **assigned}
    return assigned


def refresh(store: str | Path) -> dict[str, Any]:
    """Work out the layer's derived file for its current head (kept when it already
    is): what it hides and its provenance."""
    from .derived import layer_file, read_layer

    store = Path(store)
    head = main_head(store / ".git")
    kept = read_layer(store, head)
    if kept is not None or head is None:
        return kept or {"hidden": [], "provenance": {}}
    old = _read_json(Path(layer_file(store)))
    with Core(store).git() as git:
        at = old.get("provenanceAt") if isinstance(old, dict) else None
        known = old if isinstance(at, str) and git.has_commit(at) else None
        provenance = _provenance(git, head, known)
    value = {
        "commit": head,
        "hidden": _work_out(store),
        "provenanceAt": head,
        "provenance": provenance,
    }
    _write_json(Path(layer_file(store)), value)
    return value


_SCAN = 100_000


def hidden_ids(store: str | Path) -> frozenset[str]:
    """The ids (``skill:SLUG`` for skills) a read of this team layer leaves out."""
    return frozenset(str(x) for x in refresh(store)["hidden"])
