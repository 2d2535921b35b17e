"""The viewer's gate, in front of every request (plain ASGI, so nothing runs before it).

A request is answered only when it names this run's token as the first segment of its
path, its ``Host`` is this server's own loopback address (a DNS-rebinding page sends
its own name), and it comes from no other site (an ``Origin`` or ``Sec-Fetch-Site``
that is not this server's). Everything else gets one line and 403, and does not count as
activity for the idle exit. Every answer carries headers that keep the page to itself:
a Content-Security-Policy with no inline script and nothing from the network, no
referrer to another site (the token is in the path; ``same-origin``, not
``no-referrer``, so the page's own form posts carry their ``Origin``), no framing, no
caching.
"""

from __future__ import annotations

import hmac
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

__all__ = ["HEADERS", "MAX_BODY", "Guard", "Idle"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

MAX_BODY = 64 * 1024  # what one action's form may post

HEADERS = [
    (
        b"content-security-policy",
        b"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        b"form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    ),
    (b"referrer-policy", b"same-origin"),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"cache-control", b"no-store"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
]


class Idle:
    """When the last accepted request came (monotonic seconds)."""

    def __init__(self) -> None:
        self.last = time.monotonic()

    def touch(self) -> None:
        """An accepted request: the idle time starts again."""
        self.last = time.monotonic()

    def idle_for(self) -> float:
        """Seconds since the last accepted request."""
        return time.monotonic() - self.last


class Guard:
    """Refuse what is not this run's own page; hand the rest to ``app`` with the token
    taken off the path."""

    def __init__(self, app: App, *, token: str, port: int, idle: Idle) -> None:
        self.app = app
        self.token = token.encode("ascii")
        self.hosts = {f"127.0.0.1:{port}".encode(), f"localhost:{port}".encode()}
        self.origins = {b"http://" + host for host in self.hosts}
        self.idle = idle

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer a refusal, or pass the request on (the token taken off its path)."""
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":  # no websockets
            return
        problem = self.refusal(scope)
        if problem is not None:
            await _refuse(send, problem)
            return
        self.idle.touch()
        rest = scope["path"][len(self.token) + 1 :] or "/"
        inner = {**scope, "path": rest, "raw_path": rest.encode("utf-8")}

        async def guarded_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *HEADERS]}
            await send(message)

        await self.app(inner, receive, guarded_send)

    def refusal(self, scope: Scope) -> str | None:
        """Why this request is refused, or None."""
        headers: dict[bytes, list[bytes]] = {}
        for name, value in scope.get("headers", []):
            headers.setdefault(name.lower(), []).append(value)
        hosts = headers.get(b"host", [])
        if len(hosts) != 1 or hosts[0].lower() not in self.hosts:
            return "Refused: this viewer answers only to its own address (Host)."
        origins = headers.get(b"origin", [])
        if len(origins) > 1 or (origins and origins[0].lower() not in self.origins):
            return "Refused: a request from another site (Origin)."
        fetch_site = headers.get(b"sec-fetch-site", [b"same-origin"])
        if fetch_site[0] not in (b"same-origin", b"none"):
            return "Refused: a request from another site (Sec-Fetch-Site)."
        if scope.get("method") == "POST":  # a form of a few fields, its length declared
            lengths = headers.get(b"content-length", [])
            if len(lengths) != 1 or not lengths[0].isdigit() or int(lengths[0]) > MAX_BODY:
                return "Refused: a form's body must declare its length, at most 64 KiB."
        path: str = scope.get("path", "")
        first = path[1:].split("/", 1)[0].encode("utf-8", "replace")
        if not path.startswith("/") or not hmac.compare_digest(first, self.token):
            return "Refused: the URL lacks this run's token (use the URL xbrain ui printed)."
        return None


async def _refuse(send: Send, line: str) -> None:
    body = (line + "\n").encode("utf-8")
    await send(
        {
            "type": "http.response.start",
            "status": 403,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode("ascii")),
                *HEADERS,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
