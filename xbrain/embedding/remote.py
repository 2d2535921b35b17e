"""An OpenAI-compatible embeddings endpoint the user names: ``POST {url}/embeddings``
with ``{"model", "input"}``, answered ``{"data": [{"index", "embedding"}]}``. Texts go to
that URL and nowhere else; the key is read from the environment variable the user
named, sent as a bearer token, and never stored, logged or shown."""

from __future__ import annotations

import json
import os
import re
import urllib.request
from typing import Any

import numpy as np

from ..errors import InvalidInputError, ProviderError
from ..redact import redact_url

__all__ = ["OpenAIProvider", "check_endpoint"]

MAX_ANSWER = 64 << 20
BATCH = 64
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


class OpenAIProvider:
    """Embeddings from an OpenAI-compatible endpoint."""

    def __init__(self, url: str, model: str, key_env: str | None, timeout: float = 30.0) -> None:
        check_endpoint(url, model, key_env)
        self.url = url.rstrip("/") + "/embeddings"
        self.model = model
        self.key_env = key_env
        self.timeout = timeout
        self.model_id = f"openai:{redact_url(url.rstrip('/'))}#{model}"
        self.floor = 0.4
        self.dimension = 0  # known after the first answer

    def embed(self, texts: list[str]) -> np.ndarray:
        """The endpoint's vectors, 64 texts a request, normalized."""
        rows: list[np.ndarray] = []
        for start in range(0, len(texts), BATCH):
            rows.append(self._batch(list(texts[start : start + BATCH])))
        if not rows:
            return np.zeros((0, self.dimension), dtype=np.float32)
        out = np.concatenate(rows)
        self.dimension = int(out.shape[1])
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return (out / np.where(norms == 0, 1.0, norms)).astype(np.float32)

    def _batch(self, texts: list[str]) -> np.ndarray:
        import urllib.error

        headers = {"Content-Type": "application/json", "User-Agent": "xbrain"}
        if self.key_env:
            key = os.environ.get(self.key_env)
            if not key:
                raise InvalidInputError(f"${self.key_env} is not set (the endpoint's key).")
            headers["Authorization"] = f"Bearer {key}"
        body = json.dumps({"model": self.model, "input": texts}).encode()
        request = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
        opener = urllib.request.build_opener(_Stay)
        try:
            with opener.open(request, timeout=self.timeout) as response:
                data = response.read(MAX_ANSWER + 1)
        except urllib.error.HTTPError as exc:
            raise EndpointError(f"The embeddings endpoint answered HTTP {exc.code}.") from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise EndpointError(f"Cannot reach the embeddings endpoint: {reason}.") from None
        if len(data) > MAX_ANSWER:
            raise EndpointError("The embeddings endpoint answered more than 64 MiB.")
        return _vectors(data, len(texts))


class _Stay(urllib.request.HTTPRedirectHandler):
    """Follows no redirect: urllib would re-ask another URL, the key's header with it
    (texts and key go to the URL the user named and nowhere else). A 3xx is an error."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def _vectors(data: bytes, count: int) -> np.ndarray:
    """The vectors of an answer, checked: one per text, all of one finite dimension."""
    try:
        answer: Any = json.loads(data)
        items = sorted(answer["data"], key=lambda item: item["index"])
        rows = [item["embedding"] for item in items]
        if [item["index"] for item in items] != list(range(count)):
            raise ValueError("indexes")
        vectors = np.array(rows, dtype=np.float32)
    except (ValueError, KeyError, TypeError, RecursionError):
        raise EndpointError(
            "The embeddings endpoint's answer is not one vector per text."
        ) from None
    if vectors.ndim != 2 or not 1 <= vectors.shape[1] <= 8192 or not np.isfinite(vectors).all():
        raise EndpointError("The embeddings endpoint's vectors are malformed.")
    return vectors
