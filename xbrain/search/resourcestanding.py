"""Which resources search and recall leave out: proposed, rejected, superseded by a
resource in force, or outside their validity (issue 46; the facts live in sidecars,
:mod:`xbrain.kinds.resourcefacts`).

The sidecars at ``main`` (and which of their resources are live) are kept in a small
derived file, ``.git/xbrain/resource-facts.json`` (``{commit, facts, live}``), written
by an after-commit hook and trusted only when it records the very commit ``main`` names
(else git answers and the file is written again). Whether a resource stands is worked
out at query time (validity depends on the time asked about), so results are filtered
after ranking: a search asks the index for as many more results as there are hidden
resources (up to the request bound of 20).
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

__all__ = ["hidden", "keep_current", "mark", "not_in_force", "widened"]

CACHE = Path("xbrain") / "resource-facts.json"
_BOUND = 64 << 20
_RELEVANT = ("resource-facts/", "resources/", "tombstones/")


def _compute(view: Any) -> dict[str, Any]:
    from ..kinds import resource, resourcefacts

    facts = resourcefacts.read_all(view)
    live = sorted(rid for rid in facts if view.read(resource.path(rid)) is not None)
    return {"facts": facts, "live": live}


def _write(control: Path, commit: str, value: dict[str, Any]) -> None:
    path = control / CACHE
    with contextlib.suppress(OSError):
        path.parent.mkdir(mode=0o700, exist_ok=True)
        scratch = path.with_name(f".{path.name}.{os.getpid()}")
        fd = os.open(scratch, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump({"commit": commit, **value}, out, sort_keys=True)
        os.replace(scratch, path)


def _read(control: Path) -> dict[str, Any] | None:
    from ..errors import XbrainError
    from ..inputs import read_file

    try:
        found = json.loads(read_file(control / CACHE, _BOUND, ""))
    except (XbrainError, ValueError):
        return None
    if (
        not isinstance(found, dict)
        or not isinstance(found.get("facts"), dict)
        or not isinstance(found.get("live"), list)
    ):
        return None
    return found


def _at(store_dir: Path, at: str | None) -> dict[str, Any]:
    """The sidecars (and live ids) at ``main`` from the derived file when it reflects
    ``main``, else from git; at revision ``at`` from git."""
    from .query import main_head

    control = store_dir / ".git"
    head = main_head(control) if at is None else None
    if at is None:
        if head is None:
            return {"facts": {}, "live": []}
        found = _read(control)
        if found is not None and found.get("commit") == head:
            return found
    from ..core import Core, View

    core = Core(store_dir)
    with core.reading() as view:
        if view is None:
            return {"facts": {}, "live": []}
        if at is not None:
            with core.git() as git:
                return _compute(View(git.snapshot(git.resolve(at))))
        value = _compute(view)
        _write(control, str(view.snap.commit), value)
        return value


def not_in_force(
    store_dir: Path, as_of: str | None = None, at: str | None = None
) -> dict[str, dict[str, Any]]:
    """Why each resource that is not in force is left out (id → reason), as the facts
    stood at ``as_of`` (default: now) in the store at ``main`` (or revision ``at``)."""
    found = _at(store_dir, at)
    if not found["facts"]:
        return {}
    if as_of is None:
        from ..timestamps import now_timestamp

        as_of = now_timestamp()
    return hidden(found["facts"], set(found["live"]), as_of)


def hidden(
    facts: dict[str, dict[str, Any]], live: set[str], when: str
) -> dict[str, dict[str, Any]]:
    """Why each resource is not in force at ``when`` (those that are, absent): proposed,
    superseded by a live resource in force by then, or outside its validity.
    ``live``: which of the sidecars' resources are live."""
    out: dict[str, dict[str, Any]] = {}
    for rid, own in facts.items():
        if own.get("status") == "proposed":  # (a rejected one is a tombstone; restored,
            out[rid] = {"status": "proposed"}  # it is in force again)
        elif own.get("validUntil", "\uffff") <= when:
            out[rid] = {"expired": own["validUntil"]}
        elif own.get("validFrom", "") > when:
            out[rid] = {"validFrom": own["validFrom"]}
    standing = set(out)  # what stands on its own facts, before any supersede link
    for rid, own in sorted(facts.items()):
        if rid in live and rid not in standing:
            for old in own.get("supersedes", ()):
                if old not in standing:
                    out.setdefault(old, {"supersededBy": []})["supersededBy"].append(rid)
    return out


def widened(limit: int, hidden: dict[str, Any]) -> int:
    """How many results to ask the index for, so that ``limit`` remain after the hidden
    ones go (the request bound: 20)."""
    return max(limit, min(20, limit + len(hidden)))


def mark(
    items: list[dict[str, Any]],
    hidden: dict[str, dict[str, Any]],
    ident: Any,
    keep: bool,
    key: str,
) -> list[dict[str, Any]]:
    """``items`` without the hidden ones (``ident(item)``: its resource id, or None for
    another kind), or, with ``keep``, with them marked under ``key``."""
    if not hidden:
        return items
    out = []
    for item in items:
        why = hidden.get(ident(item) or "")
        if why is None:
            out.append(item)
        elif keep:
            out.append({**item, key: {**item.get(key, {}), **why}} if key else {**item, **why})
    return out


def keep_current(core: Any) -> None:
    """Register the hook that keeps the derived file in step with each commit of ``core``
    (carried forward when a commit touched no resource or sidecar)."""

    def hook(git: Any, parent: Any, commit: Any, changes: dict[str, bytes | None]) -> None:
        from ..core import View, private_umask

        control = git.control_dir
        found = _read(control) if parent is not None else None
        commit = str(commit)
        relevant = any(path.startswith(_RELEVANT[0]) for path in changes) or (
            found is not None
            and found["facts"]
            and any(path.startswith(_RELEVANT) for path in changes)
        )
        with private_umask():
            if found is not None and found.get("commit") == parent and not relevant:
                _write(control, commit, {"facts": found["facts"], "live": found["live"]})
            else:
                with contextlib.suppress(Exception):  # derived data: the reader catches up
                    _write(control, commit, _compute(View(git.snapshot(commit))))

    core.after_commit.append(hook)
