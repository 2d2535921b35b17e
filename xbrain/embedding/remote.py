"""An OpenAI-compatible embeddings endpoint the user names: ``POST {url}/embeddings``
with ``{"model", "input"}``, answered ``{"data": [{"index", "embedding"}]}``. Texts go to
that URL and nowhere else; the key is read from the environment variable the user
named, sent as a bearer token, and never stored, logged or shown.

The endpoint is hostile input. Its time is bounded for the whole exchange (connect,
send, every read until the body is complete; not each socket read, which a server
sending a byte at a time would stretch without end), and its answer is checked before it
is used: its size, one vector per text, of one dimension, finite numbers only."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import re
import socket
import threading
import time
import urllib.request
from typing import Any

import numpy as np

from ..errors import InvalidInputError, ProviderError
from ..redact import redact_url
from . import DEFAULT_TIMEOUT, KeyNotSetError, ProviderTimeoutError

__all__ = ["OpenAIProvider", "check_endpoint", "max_answer"]

BATCH = 64
MAX_DIMENSION = 8192
MAX_NUMBER = 32  # bytes of JSON per number, separator included: a float's repr is 24 at most
_ENV = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,100}")


class EndpointError(ProviderError):
    """The embeddings endpoint failed or answered something else."""


def check_endpoint(url: str | None, model: str | None, key_env: str | None) -> None:
    """Refuse an endpoint that is not an http(s) URL without credentials, or no model."""
    from urllib.parse import urlsplit

    if not url or not model:
        raise InvalidInputError("The openai provider needs --url URL and --model NAME.")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InvalidInputError("--url must be an http(s) URL, e.g. https://api.example.com/v1.")
    if parts.username or parts.password or parts.query or parts.fragment:
        raise InvalidInputError(
            "--url must not carry credentials or a query; name the key's variable with --key-env."
        )
    if key_env is not None and not _ENV.fullmatch(key_env):
        raise InvalidInputError("--key-env must be an environment variable name.")


def max_answer(count: int) -> int:
    """The most bytes an honest answer for ``count`` texts takes (``count`` vectors of
    the largest dimension, each number at its longest, and room for the envelope)."""
    return count * MAX_DIMENSION * MAX_NUMBER + (64 << 10)


class OpenAIProvider:
    """Embeddings from an OpenAI-compatible endpoint."""

    def __init__(
        self, url: str, model: str, key_env: str | None, timeout: float = DEFAULT_TIMEOUT
    ) -> None:
        check_endpoint(url, model, key_env)
        self.url = url.rstrip("/") + "/embeddings"
        self.model = model
        self.key_env = key_env
        self.timeout = timeout
        self.model_id = f"openai:{redact_url(url.rstrip('/'))}#{model}"
        self.floor = 0.4
        self.dimension = 0  # known after the first answer

    def embed(self, texts: list[str]) -> np.ndarray:
        """The endpoint's vectors, 64 texts a request, normalized; every batch of one
        call must have the same dimension."""
        rows: list[np.ndarray] = []
        for start in range(0, len(texts), BATCH):
            batch = self._batch(list(texts[start : start + BATCH]))
            if rows and batch.shape[1] != rows[0].shape[1]:
                raise EndpointError(
                    "The embeddings endpoint changed its vectors' dimension between requests "
                    f"({rows[0].shape[1]}, then {batch.shape[1]})."
                )
            rows.append(batch)
        if not rows:
            return np.zeros((0, self.dimension), dtype=np.float32)
        out = np.concatenate(rows)
        self.dimension = int(out.shape[1])
        return out

    def _batch(self, texts: list[str]) -> np.ndarray:
        import urllib.error

        headers = {"Content-Type": "application/json", "User-Agent": "xbrain"}
        if self.key_env:
            key = os.environ.get(self.key_env)
            if not key:
                raise KeyNotSetError(f"${self.key_env} is not set (the endpoint's key).")
            headers["Authorization"] = f"Bearer {key}"
        body = json.dumps({"model": self.model, "input": texts}).encode()
        request = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
        bound = max_answer(len(texts))
        failed: BaseException | None = None
        with _Deadline(self.timeout) as deadline:
            opener = urllib.request.build_opener(_Stay, _Timed(deadline), _TimedTLS(deadline))
            try:
                with opener.open(request, timeout=self.timeout) as response:
                    data = response.read(bound + 1)
            except urllib.error.HTTPError as exc:
                exc.close()
                raise EndpointError(f"The embeddings endpoint answered HTTP {exc.code}.") from None
            except (urllib.error.URLError, OSError, http.client.HTTPException) as exc:
                failed = exc
        # shut down midway, what came back was cut short; a socket's own timeout may
        # have been the first to see the time was up
        if deadline.expired or (failed is not None and deadline.over()):
            raise ProviderTimeoutError(
                f"The embeddings endpoint did not answer within {self.timeout:g} s "
                "(reindex --semantic --timeout sets it)."
            )
        if failed is not None:
            reason = getattr(failed, "reason", failed)
            raise EndpointError(f"Cannot reach the embeddings endpoint: {reason}.")
        if len(data) > bound:
            raise EndpointError(
                f"The embeddings endpoint answered more than {bound:,} bytes "
                f"for {len(texts)} texts."
            )
        return _vectors(data, len(texts))


class _Deadline:
    """Bounds one HTTP exchange as a whole: once ``seconds`` have passed, every socket it
    opened is shut down, so whatever connect, send or read is waiting returns at once.
    It holds a duplicate of each socket (TLS takes the original over), closed at the end."""

    def __init__(self, seconds: float) -> None:
        self.expired = False
        self._end = time.monotonic() + seconds
        self._lock = threading.Lock()
        self._held: list[socket.socket] = []
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True

    def __enter__(self) -> _Deadline:
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()
        with self._lock:
            held, self._held = self._held, []
        for sock in held:
            sock.close()

    def over(self) -> bool:
        """Whether the time is up (a socket's own timeout may have said so first)."""
        return self.expired or time.monotonic() >= self._end

    def connect(
        self, address: tuple[str, int], timeout: Any = None, source_address: Any = None
    ) -> socket.socket:
        """``socket.create_connection`` within what is left of the time."""
        left = self._end - time.monotonic()
        if left <= 0:
            raise TimeoutError("timed out")
        sock = socket.create_connection(address, left, source_address)
        with self._lock:
            self._held.append(sock.dup())
            late = self.expired
        if late:
            self._shut(sock)
        return sock

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            held = list(self._held)
        for sock in held:
            self._shut(sock)

    @staticmethod
    def _shut(sock: socket.socket) -> None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


class _Connection(http.client.HTTPConnection):
    """HTTP whose sockets ``deadline`` holds (http.client connects through this seam)."""

    def __init__(self, host: str, *, deadline: _Deadline, **kwargs: Any) -> None:
        super().__init__(host, **kwargs)
        self._create_connection = deadline.connect


class _TLSConnection(http.client.HTTPSConnection):
    """HTTPS whose sockets ``deadline`` holds: the TLS handshake is within it too."""

    def __init__(self, host: str, *, deadline: _Deadline, **kwargs: Any) -> None:
        super().__init__(host, **kwargs)
        self._create_connection = deadline.connect


class _Timed(urllib.request.HTTPHandler):
    def __init__(self, deadline: _Deadline) -> None:
        super().__init__()
        self.deadline = deadline

    def http_open(self, req: Any) -> Any:
        connection: Any = _Connection  # urllib passes do_open's keywords on to it
        return self.do_open(connection, req, deadline=self.deadline)


class _TimedTLS(urllib.request.HTTPSHandler):
    def __init__(self, deadline: _Deadline) -> None:
        super().__init__()
        self.deadline = deadline

    def https_open(self, req: Any) -> Any:
        # no context: http.client's default one, as urllib's own handler gives it
        connection: Any = _TLSConnection
        return self.do_open(connection, req, deadline=self.deadline)


class _Stay(urllib.request.HTTPRedirectHandler):
    """Follows no redirect: urllib would re-ask another URL, the key's header with it
    (texts and key go to the URL the user named and nowhere else). A 3xx is an error."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def _vectors(data: bytes, count: int) -> np.ndarray:
    """The vectors of an answer, checked — one per text, all of one dimension (1 to 8192),
    plain finite numbers — and L2-normalized (scaled first, so no huge number overflows)."""
    malformed = EndpointError("The embeddings endpoint's vectors are malformed.")
    try:
        answer: Any = json.loads(data)
        items = sorted(answer["data"], key=lambda item: item["index"])
        rows = [item["embedding"] for item in items]
        if [item["index"] for item in items] != list(range(count)):
            raise ValueError("indexes")
    except (ValueError, KeyError, TypeError, RecursionError):
        raise EndpointError(
            "The embeddings endpoint's answer is not one vector per text."
        ) from None
    if not all(isinstance(row, list) and 1 <= len(row) <= MAX_DIMENSION for row in rows):
        raise malformed
    if len({len(row) for row in rows}) != 1:
        raise malformed
    if not all(type(x) in (float, int) for row in rows for x in row):
        raise malformed  # strings, booleans, nulls, objects
    try:
        vectors = np.array(rows, dtype=np.float64)
    except (OverflowError, ValueError):  # an integer past any float
        raise malformed from None
    if not np.isfinite(vectors).all():
        raise malformed
    scale = np.abs(vectors).max(axis=1, keepdims=True)
    unit = vectors / np.where(scale == 0, 1.0, scale)
    norms = np.linalg.norm(unit, axis=1, keepdims=True)
    return (unit / np.where(norms == 0, 1.0, norms)).astype(np.float32)
