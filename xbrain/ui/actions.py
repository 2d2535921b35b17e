"""The viewer's small actions, each the CLI's own operation (one commit, its trailers,
``--agent ui``, the same validation): retire or activate an entry, accept or reject a
proposed one, publish, deprecate, archive or unarchive a skill, delete a resource;
accept or reject a team's proposal as its reviewer (``xbrain team review``). A team's
records are otherwise read-only here, as in the CLI.

A form posts ``action``, its target and this browser session's CSRF token; a success
returns to the page it came from with one line saying what was done, a failure is the
error page with the CLI's message."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from starlette.responses import PlainTextResponse, RedirectResponse

from ..errors import InvalidInputError

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

    from .viewer import Viewer

__all__ = ["act"]

_MAX_FIELD = 4096


def act(viewer: Viewer, request: Request) -> Response:
    """Check the CSRF token, run one action, return to the page it came from."""
    import anyio.from_thread

    form = anyio.from_thread.run(_form, request)
    if not viewer.csrf_ok(request, form.get("csrf", "")):
        return PlainTextResponse(
            "Refused: this form lacks the page's CSRF token (reload the page).\n", 403
        )
    action = form.get("action", "")
    run = _ACTIONS.get(action)
    if run is None:
        raise InvalidInputError(f"Unknown action {action!r}.")
    done = run(viewer, form)
    back = form.get("back", "/")
    if not back.startswith("/") or back.startswith("//") or "\\" in back:
        back = "/"
    back = back.split("?", 1)[0] if action != "resource-delete" else "/"
    return RedirectResponse(f"{viewer.base}{back}?msg={quote(done)}", status_code=303)


async def _form(request: Request) -> dict[str, str]:
    """The posted fields (each bounded; a file upload is refused)."""
    form = await request.form(max_files=0, max_fields=20)
    out: dict[str, str] = {}
    for key, value in form.items():
        if not isinstance(value, str) or len(value) > _MAX_FIELD:
            raise InvalidInputError(f"Form field {key!r} is not a short text.")
        out[key] = value
    return out


def _need(form: dict[str, str], key: str) -> str:
    value = form.get(key, "")
    if not value:
        raise InvalidInputError(f"The action needs {key}.")
    return value


def _entry(status: str) -> Any:
    def run(viewer: Viewer, form: dict[str, str]) -> str:
        rid = _need(form, "id")
        viewer.call(viewer.store.entry_status, rid, status)
        return f"{'Retired' if status == 'retired' else 'Activated'} {rid}."

    return run


def _review(viewer: Viewer, form: dict[str, str]) -> str:
    rid = _need(form, "id")
    if form.get("action") == "review-accept":
        viewer.call(viewer.store.review_accept, [rid])
        return f"Accepted {rid}."
    viewer.call(viewer.store.review_reject, [rid], _need(form, "reason"))
    return f"Rejected {rid}."


def _team(viewer: Viewer, form: dict[str, str]) -> str:
    """A team proposal accepted or rejected as ``xbrain team review NAME`` does (a push
    the host refuses is said, and the decision kept for ``xbrain team sync``)."""
    from .teams import decide

    verb = "accept" if form.get("action") == "team-accept" else "reject"
    reason = form.get("reason") or None
    return decide(viewer, _need(form, "team"), verb, _need(form, "id"), reason)


def _skill(verb: str) -> Any:
    def run(viewer: Viewer, form: dict[str, str]) -> str:
        slug = _need(form, "slug")
        revision = _need(form, "rev") if verb in ("publish", "deprecate") else None
        viewer.call(viewer.store.skill_lifecycle, verb, slug, revision)
        what = f"{slug} {revision}" if revision else slug
        return f"{_DONE[verb]} {what}."

    return run


def _delete(viewer: Viewer, form: dict[str, str]) -> str:
    rid = _need(form, "id")
    done = viewer.call(viewer.store.delete, rid)
    if not done.get("deleted"):  # the CLI's answer too: an absent id changes nothing
        return f"Nothing deleted: {rid} is not a live resource of your store."
    return f"Deleted {rid} (a tombstone; xbrain restore brings it back)."


_DONE = {
    "publish": "Published",
    "deprecate": "Deprecated",
    "archive": "Archived",
    "unarchive": "Unarchived",
}
_ACTIONS = {
    "entry-retire": _entry("retired"),
    "entry-activate": _entry("active"),
    "review-accept": _review,
    "review-reject": _review,
    "team-accept": _team,
    "team-reject": _team,
    "skill-publish": _skill("publish"),
    "skill-deprecate": _skill("deprecate"),
    "skill-archive": _skill("archive"),
    "skill-unarchive": _skill("unarchive"),
    "resource-delete": _delete,
}
