"""What reaches the MCP SDK from stdin: malformed JSON-RPC is answered here, not crashed on."""

from __future__ import annotations

import json
import re
import sys
from typing import Any

from ..inputs import MAX_INPUT
from ..text import holds_lone_surrogate

__all__ = ["MAX_LINE", "Wire"]

MAX_LINE = MAX_INPUT + 2 * 1024 * 1024  # a 10 MiB put plus the JSON-RPC envelope
DRAIN_SECONDS = 60  # after stdin closes, how long requests already read may still take
PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS = -32700, -32600, -32602


class Wire:
    """stdin/stdout in front of the SDK: every line gets an answer or reaches it.

    The SDK (mcp 2.3) drops, without a response, a line it cannot parse (no -32700), a
    request nested deeper than its parser allows, and one holding a lone surrogate
    (its reply cannot be encoded). Here each line is read bounded, checked first, and
    answered with a JSON-RPC error when it would be dropped; the rest pass unchanged.
    Writes (the SDK's replies and these errors) go out whole, one line at a time.
    """

    def __init__(self, validate: Any) -> None:
        import anyio

        self._validate = validate
        self._in = sys.stdin.buffer
        self._out = sys.stdout.buffer
        self._lock = anyio.Lock()
        self._pending: set[str | int] = set()  # ids of requests passed on, not answered

    def __aiter__(self) -> Any:
        return self._lines()

    async def _lines(self) -> Any:
        import anyio

        while True:
            line = await anyio.to_thread.run_sync(self._readline)
            if line is None:
                break
            error, text = self.check(line)
            if error is not None:
                await self.write(json.dumps(error) + "\n")
            elif text is not None:
                yield text
        # The client closed stdin: the SDK then cancels what it has not answered, so the
        # requests read before the end are answered first (a client may send its last
        # requests and close at once; each line gets its answer).
        with anyio.move_on_after(DRAIN_SECONDS):
            while self._pending:
                await anyio.sleep(0.01)

    def _readline(self) -> bytes | None:
        """One line of at most MAX_LINE bytes; a longer one is drained and returned empty."""
        line = self._in.readline(MAX_LINE + 1)
        if not line:
            return None
        if len(line) > MAX_LINE and not line.endswith(b"\n"):
            while (rest := self._in.readline(MAX_LINE)) and not rest.endswith(b"\n"):
                pass
            return b"\0too-long"
        return line

    def check(self, line: bytes) -> tuple[dict[str, Any] | None, str | None]:
        """(an error response, None) for a line the SDK would drop, else (None, the line)."""
        if line == b"\0too-long":
            return _rpc_error(None, INVALID_REQUEST, f"Request exceeds {MAX_LINE:,} bytes."), None
        if not line.strip():
            return None, None
        try:
            text = line.decode("utf-8")
            value = json.loads(text)
        except (UnicodeDecodeError, ValueError, RecursionError):
            ident = _top_level_id(line.decode("utf-8", "replace"))
            return _rpc_error(ident, PARSE_ERROR, "Parse error: not one JSON document."), None
        ident = value.get("id") if isinstance(value, dict) else None
        if isinstance(ident, bool) or not isinstance(ident, (str, int)):
            ident = None
        from ..inputs import depth_exceeds

        if depth_exceeds(value):
            return _rpc_error(ident, INVALID_REQUEST, "Request is nested too deeply."), None
        if holds_lone_surrogate(value):
            message = "Request holds invalid Unicode (a lone surrogate)."
            return _rpc_error(ident, INVALID_PARAMS, message), None
        try:
            self._validate(value)
        except Exception:
            return _rpc_error(ident, INVALID_REQUEST, "Invalid JSON-RPC request."), None
        if ident is not None and "method" in value:
            self._pending.add(ident)
        return None, text

    async def write(self, text: str) -> None:
        """Send one whole line (the SDK calls this for every reply)."""
        import anyio

        data = text.encode("utf-8", "backslashreplace")
        async with self._lock:
            await anyio.to_thread.run_sync(self._send, data)
        if self._pending:
            self._pending.discard(_answered(text))

    def _send(self, data: bytes) -> None:
        self._out.write(data)
        self._out.flush()

    async def flush(self) -> None:
        """Every write is flushed already."""


def _answered(text: str) -> str | int | None:
    """The id a reply answers (a result or an error), else None."""
    try:
        value = json.loads(text)
    except ValueError:
        return None
    if isinstance(value, dict) and ("result" in value or "error" in value):
        ident = value.get("id")
        return ident if isinstance(ident, (str, int)) else None
    return None


def _rpc_error(ident: str | int | None, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": message}}


_SCALAR_ID = re.compile(r'\s*(-?\d{1,18}(?![\d.eE])|"(?:[^"\\\x00-\x1f]|\\.){0,200}")')


def _top_level_id(text: str) -> str | int | None:
    """The ``id`` of a request JSON cannot parse (too deep, say), found by a flat scan.

    Only a top-level ``"id"`` key with a number or string value counts; anything less
    certain gives None, as JSON-RPC says for an unreadable request.
    """
    depth, i, n = 0, 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            end = i + 1
            while end < n and text[end] != '"':
                end += 2 if text[end] == "\\" else 1
            key = text[i : end + 1]
            i = end + 1
            if depth == 1 and key == '"id"':
                colon = i  # no slice of the rest: a line of many "id" keys stays linear
                while colon < n and text[colon].isspace():
                    colon += 1
                if colon < n and text[colon] == ":":
                    found = _SCALAR_ID.match(text, colon + 1)
                    if found:
                        value = json.loads(found.group(1))
                        return value if isinstance(value, (str, int)) else None
            continue
        if c in "{[":
            depth += 1
        elif c in "}]":
            depth -= 1
        i += 1
    return None
