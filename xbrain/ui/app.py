"""The viewer's application: its routes (pages, the one action endpoint, the static
files), each answering an ``XbrainError`` with the error page."""

from __future__ import annotations

from collections.abc import Callable

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from . import actions, pages
from .viewer import Viewer, static

__all__ = ["build"]

Handler = Callable[[Viewer, Request], Response]


def build(viewer: Viewer) -> Starlette:
    """The Starlette application of ``viewer`` (to be wrapped in :class:`ui.guard.Guard`)."""

    def wrap(handler: Handler) -> Callable[[Request], Response]:
        def endpoint(request: Request) -> Response:
            try:
                return handler(viewer, request)
            except Exception as exc:  # an XbrainError is the CLI's line; others say so too
                return viewer.failure(request, exc)

        return endpoint

    routes = [Route(path, wrap(handler), methods=["GET"]) for path, handler in pages.PAGES.items()]
    routes.append(Route("/act", wrap(actions.act), methods=["POST"]))
    routes.append(Route("/static/{name}", static, methods=["GET"]))
    return Starlette(routes=routes)
