"""The viewer's shared state: one ``Store`` behind a lock, Jinja2 pages, a CSRF token per
browser session, and errors shown as the CLI words them.

Every page and action is a plain function of a :class:`Viewer` and a request; the store
is read and written only through the facade (``xbrain.store``) and the front-end
functions the CLI itself calls for search and recall, so the viewer never answers
differently from ``xbrain``.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import jinja2
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response

from ..errors import describe
from . import render

if TYPE_CHECKING:
    from ..store import Store

__all__ = ["Viewer", "static"]

_HERE = Path(__file__).parent
_STATIC = {"ui.css": "text/css; charset=utf-8", "ui.js": "text/javascript; charset=utf-8"}
# an error's exit code → the HTTP status its page is answered with
_STATUS = {2: 400, 3: 404, 4: 400, 5: 409, 6: 503, 7: 500, 8: 502}


class Viewer:
    """What every page shares: the store (one call at a time), the templates, the
    token-bearing base of every link and the CSRF rule."""

    def __init__(self, store: Store, token: str, port: int) -> None:
        self.store = store
        self.base = f"/{token}"
        self.cookie = f"xbrain-ui-{port}"
        self._secret = secrets.token_bytes(32)
        self._lock = threading.Lock()
        self.env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(_HERE / "templates"),
            autoescape=True,
            undefined=jinja2.StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
            finalize=render.shown,
        )
        self.env.filters["markdown"] = render.markdown
        self.env.filters["q"] = lambda value: quote(str(value), safe="")
        self.env.filters["weblink"] = render.weblink
        self.env.filters["layerlink"] = lambda layer: render.layer_link(self.base, layer)
        self.answered: dict[str, str] = {}  # how the last search was answered (health)

    def call(self, operation: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """One store operation at a time (the page's threads share one ``Store``)."""
        with self._lock:
            return operation(*args, **kwargs)

    def csrf(self, request: Request) -> tuple[str, str]:
        """This browser session's (cookie, CSRF token): the cookie is made on its first
        page; the token is the cookie's HMAC under this run's secret."""
        cookie = request.cookies.get(self.cookie, "")
        if len(cookie) != 43:  # token_urlsafe(32)
            cookie = secrets.token_urlsafe(32)
        mac = hmac.new(self._secret, cookie.encode("ascii", "replace"), hashlib.sha256)
        return cookie, mac.hexdigest()

    def csrf_ok(self, request: Request, given: str) -> bool:
        """Whether ``given`` is this browser session's CSRF token."""
        if self.cookie not in request.cookies:
            return False
        return hmac.compare_digest(self.csrf(request)[1], given)

    def page(
        self, request: Request, template: str, http_status: int = 200, **data: Any
    ) -> HTMLResponse:
        """A rendered page (and the session cookie, on a first page)."""
        cookie, token = self.csrf(request)
        message = request.query_params.get("msg", "")[:500]
        html = self.env.get_template(template).render(
            base=self.base, csrf=token, message=message, here=_here(request), **data
        )
        response = HTMLResponse(html, status_code=http_status)
        if request.cookies.get(self.cookie) != cookie:
            response.set_cookie(
                self.cookie, cookie, path=self.base + "/", httponly=True, samesite="strict"
            )
        return response

    def failure(self, request: Request, exc: BaseException) -> HTMLResponse:
        """An error page: the CLI's one line and its exit code."""
        message, code = describe(exc)
        return self.page(request, "error.html", _STATUS.get(code, 500), error=message, code=code)


def _here(request: Request) -> str:
    """The request's path and query inside the base (where an action returns to)."""
    query = request.url.query
    return request.url.path + (f"?{query}" if query else "")


def static(request: Request) -> Response:
    """The stylesheet and the script shipped in the package (nothing else)."""
    name = request.path_params["name"]
    if name not in _STATIC:
        return PlainTextResponse("Not found.\n", status_code=404)
    return Response((_HERE / "static" / name).read_bytes(), media_type=_STATIC[name])
