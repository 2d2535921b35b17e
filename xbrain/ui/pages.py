"""The viewer's pages: each reads what the CLI's command of the same name prints (through
the facade, or the front-end function the CLI calls for search and recall) and renders
it."""

from __future__ import annotations

import json
import os
import stat
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInputError, NotFoundError
from . import render, teams

if TYPE_CHECKING:
    from collections.abc import Callable

    from starlette.requests import Request
    from starlette.responses import Response

    from .viewer import Viewer

__all__ = ["PAGES"]

_MODES = ("", "lexical", "semantic", "hybrid")
_WHAT = ("all", "entries", "skills", "resources")
_TEXT_FIELDS = ("text", "summary", "purpose", "body", "description", "oneLiner", "title")


def home(viewer: Viewer, request: Request) -> Response:
    """The store at a glance, and the search box."""
    store = viewer.store
    status = viewer.call(store.status)
    skills = viewer.call(store.skill_list)
    entries = viewer.call(store.entry_list)
    review = viewer.call(store.review_list)
    recent = viewer.call(store.log, None, 10)
    return viewer.page(
        request,
        "home.html",
        status=status,
        skills=skills["count"],
        entries=entries["count"],
        review=review["count"],
        commits=recent["commits"],
    )


def search(viewer: Viewer, request: Request) -> Response:
    """Search across kinds: entries and skills as ``xbrain recall`` finds them (with its
    ``why``; nothing recorded in telemetry), resources as ``xbrain search`` does."""
    from ..lightcli import ENTRY_KINDS
    from . import served

    params = request.query_params
    query = params.get("q", "").strip()
    mode = params.get("mode", "")
    what = params.get("what", "all")
    retired = params.get("retired") == "on"
    if mode not in _MODES or what not in _WHAT:
        raise InvalidInputError("Unknown search mode or kind.")
    recalled: list[dict[str, Any]] = []
    resources: dict[str, Any] | None = None
    notes: list[str] = []
    paths: list[str] = []
    if query:
        only = {"entries": ENTRY_KINDS, "skills": ("skill",), "all": (*ENTRY_KINDS, "skill")}
        if what in only:
            found, path = viewer.call(
                served.recall,
                viewer.store.path,
                query,
                only=only[what],
                include_retired=retired,
                mode=mode or None,
            )
            paths.append(path)
            recalled = found["results"]
            notes += [found[key] for key in ("note", "warning") if isinstance(found.get(key), str)]
        if what in ("all", "resources"):
            resources, path = viewer.call(
                served.search, viewer.store.path, query, mode=mode or None
            )
            paths.append(path)
    answered = served.SERVE if served.SERVE in paths else (served.VIEWER if paths else "")
    if answered:
        viewer.answered = {"path": answered, "query": query[:200]}
    return viewer.page(
        request,
        "search.html",
        query=query,
        mode=mode,
        what=what,
        retired=retired,
        modes=_MODES,
        whats=_WHAT,
        recalled=recalled,
        resources=resources,
        notes=notes,
        answered=answered,
    )


def resource(viewer: Viewer, request: Request) -> Response:
    """One resource: its text rendered, its citation, its history."""
    at = teams.where(viewer, request)
    rid = request.path_params["rid"]
    found = viewer.call(at.store.get, rid)
    log = viewer.call(at.store.log, rid, 100)
    return viewer.page(
        request, "resource.html", item=found, log=log["commits"], rid=rid, **_at(at, rid)
    )


def entry(viewer: Viewer, request: Request) -> Response:
    """One entry: its body rendered, its fields, its history."""
    at = teams.where(viewer, request)
    rid = request.path_params["rid"]
    found = viewer.call(at.store.entry_get, rid)
    log = viewer.call(at.store.log, rid, 100)
    return viewer.page(
        request, "entry.html", item=found, log=log["commits"], rid=rid, **_at(at, rid)
    )


def _at(at: teams.Where, key: str) -> dict[str, Any]:
    """What a record page's template needs to know of its layer: the link prefix of
    its store's pages and, for a team record, its layer, trust and provenance."""
    return {"at": at.link, "team": at.about(key)}


def record_diff(viewer: Viewer, request: Request) -> Response:
    """Two revisions of a resource or an entry side by side, word by word."""
    at = teams.where(viewer, request)
    rid = request.path_params["rid"]
    old = request.query_params.get("a") or None
    new = request.query_params.get("b") or ("main" if old else None)
    found = viewer.call(at.store.diff, rid, old, new)
    rows = []
    for change in found.get("changes", []):
        before, after = change.get("before"), change.get("after")
        if isinstance(before, str) and isinstance(after, str):
            ops = viewer.call(viewer.store.word_diff, before, after)
            left, right = render.side_by_side(ops)
        else:
            left, right = render.side_by_side(
                [{"op": "replace", "old": _shown(before), "new": _shown(after)}]
            )
        rows.append({"field": change.get("field", ""), "left": left, "right": right})
    log = viewer.call(at.store.log, rid, 100)
    return viewer.page(
        request,
        "diff.html",
        rid=rid,
        diff=found,
        rows=rows,
        log=log["commits"],
        a=old,
        b=new,
        **_at(at, rid),
    )


def _shown(value: Any) -> str:
    return "" if value is None else json.dumps(value, ensure_ascii=False, indent=1)


def skills(viewer: Viewer, request: Request) -> Response:
    """Every skill with its status and published revision."""
    found = viewer.call(viewer.store.skill_list)
    return viewer.page(request, "skills.html", skills=teams.skills(viewer, found["skills"]))


def skill(viewer: Viewer, request: Request) -> Response:
    """One skill: Level 1 of a revision (published, else the head), its components, its
    revision chain with each revision's state, and the lifecycle actions."""
    at = teams.where(viewer, request)
    slug = request.path_params["slug"]
    revision = request.query_params.get("rev") or None
    level1 = viewer.call(at.store.skill_show, slug, revision, proposed=True)
    log = viewer.call(at.store.skill_log, slug, 100)
    return viewer.page(
        request, "skill.html", slug=slug, level1=level1, log=log, **_at(at, f"skill:{slug}")
    )


def skill_file(viewer: Viewer, request: Request) -> Response:
    """Level 2: one component of exactly one revision (text shown as text, never run)."""
    at = teams.where(viewer, request)
    slug = request.path_params["slug"]
    revision = request.query_params.get("rev", "")
    path = request.query_params.get("path", "")
    if not revision or not path:
        raise InvalidInputError("A component needs rev and path.")
    found = viewer.call(at.store.skill_component, slug, revision, path)
    return viewer.page(request, "component.html", slug=slug, item=found, **_at(at, f"skill:{slug}"))


def skill_diff(viewer: Viewer, request: Request) -> Response:
    """Two revisions of a skill side by side, file by file, word by word."""
    at = teams.where(viewer, request)
    slug = request.path_params["slug"]
    old, new = request.query_params.get("a", ""), request.query_params.get("b", "")
    log = viewer.call(at.store.skill_log, slug, 100)
    revisions = log["revisions"]
    if not old or not new:
        if len(revisions) < 2:
            raise NotFoundError(f"Skill {slug} has only one revision: nothing to compare.")
        old, new = revisions[1]["revision_id"], revisions[0]["revision_id"]
    found = viewer.call(at.store.skill_diff, slug, old, new, "ops")
    files = []
    for item in found["files"]:
        left, right = render.side_by_side(item.get("ops", []))
        files.append({**item, "left": left, "right": right})
    return viewer.page(
        request,
        "skilldiff.html",
        slug=slug,
        diff=found,
        files=files,
        log=log,
        a=old,
        b=new,
        **_at(at, f"skill:{slug}"),
    )


def entries(viewer: Viewer, request: Request) -> Response:
    """Entries by kind and status."""
    from ..lightcli import ENTRY_KINDS

    kind = request.query_params.get("kind") or None
    status = request.query_params.get("status") or None
    found = viewer.call(viewer.store.entry_list, kind, status)
    return viewer.page(
        request,
        "entries.html",
        entries=teams.entries(viewer, found["entries"], kind, status),
        kind=kind or "",
        status=status or "",
        kinds=ENTRY_KINDS,
    )


def resources(viewer: Viewer, request: Request) -> Response:
    """Resources newest first, a page at a time, with every team layer's (``xbrain
    list``: each says its layer when a team exists)."""
    offset = request.query_params.get("offset", "0")
    if not offset.isdigit() or len(offset) > 7:
        raise InvalidInputError("offset must be a whole number.")
    listed = viewer.call(teams.resources, viewer, int(offset), 50)
    return viewer.page(request, "resources.html", listed=listed, offset=int(offset), limit=50)


def review(viewer: Viewer, request: Request) -> Response:
    """The review queue: proposed entries, who proposed them, possible conflicts."""
    found = viewer.call(viewer.store.review_list)
    return viewer.page(request, "review.html", queue=found, teams=teams.queues(viewer))


def telemetry(viewer: Viewer, request: Request) -> Response:
    """Matches per entry over time, entries never matched, recent sessions."""
    store = viewer.store
    per_entry = viewer.call(store.telemetry)
    unused = viewer.call(store.telemetry, None, True)
    overview = viewer.call(store.telemetry_overview, 30, 10)
    rows = [
        {**item, "chart": render.chart(overview["daily"].get(item["id"], {}))}
        for item in per_entry.get("entries", [])
    ]
    return viewer.page(
        request,
        "telemetry.html",
        enabled=per_entry["enabled"],
        rows=rows,
        unused=unused.get("unused", []),
        sessions=overview["sessions"],
    )


def health(viewer: Viewer, request: Request) -> Response:
    """``doctor``, the remotes and their last push, pack and index sizes."""
    store = viewer.store
    doctor = viewer.call(store.doctor)
    remotes = viewer.call(store.remote_list)["remotes"]
    control = store.path / ".git"
    pushed = [{**remote, **_last_push(control, remote["name"])} for remote in remotes]
    from .served import server_pid

    return viewer.page(
        request,
        "health.html",
        doctor=doctor,
        remotes=pushed,
        indexes=_indexes(control),
        server=server_pid(store.path),
        answered=viewer.answered,
    )


def _last_push(control: Any, name: str) -> dict[str, Any]:
    """When ``main`` was last pushed to remote ``name`` and which commit: the time its
    remote-tracking ref was written (a push or a pull sets it), read without following
    a link."""
    from datetime import datetime, timezone

    if not name.replace("-", "").replace("_", "").replace(".", "").isalnum():
        return {}
    ref = control / "refs" / "remotes" / name / "main"
    try:
        info = os.lstat(ref)
        if not stat.S_ISREG(info.st_mode) or info.st_size > 100:
            return {}
        commit = ref.read_text("ascii").strip()
    except (OSError, UnicodeDecodeError):
        return {}
    moment = datetime.fromtimestamp(info.st_mtime, timezone.utc)
    return {"pushed": moment.strftime("%Y-%m-%dT%H:%M:%SZ"), "pushedCommit": commit}


def _indexes(control: Any) -> list[dict[str, Any]]:
    """The derived databases under ``.git/xbrain`` and their sizes (with their WAL)."""
    folder = control / "xbrain"
    sizes: dict[str, int] = {}
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    for name in names:
        base = name.removesuffix("-wal").removesuffix("-shm")
        if not base.endswith(".sqlite"):
            continue
        try:
            info = os.lstat(folder / name)
        except OSError:
            continue
        if stat.S_ISREG(info.st_mode):
            sizes[base] = sizes.get(base, 0) + info.st_size
    return [{"name": name, "bytes": size} for name, size in sorted(sizes.items())]


PAGES: dict[str, Callable[[Viewer, Request], Response]] = {
    "/": home,
    "/search": search,
    "/resource/{rid}": resource,
    "/entry/{rid}": entry,
    "/diff/{rid}": record_diff,
    "/skills": skills,
    "/skill/{slug}": skill,
    "/skill/{slug}/file": skill_file,
    "/skill/{slug}/diff": skill_diff,
    "/entries": entries,
    "/resources": resources,
    "/review": review,
    "/telemetry": telemetry,
    "/health": health,
}
# a team's records (``xbrain team``): the same pages over the team's store, read-only
PAGES.update(
    {
        f"/team/{{team}}{path}": PAGES[path]
        for path in (
            "/resource/{rid}",
            "/entry/{rid}",
            "/diff/{rid}",
            "/skill/{slug}",
            "/skill/{slug}/file",
            "/skill/{slug}/diff",
        )
    }
)
