"""URL rules: WHATWG parsing, https only, no credentials, no secrets, canonical X links.

Parsing uses ada (the WHATWG URL parser Node itself uses), so a stored ``href`` is the
same string the original produced. Beyond the original, a URL whose query (or
``#a=b`` fragment) carries a credential-named parameter is rejected.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qsl

from .errors import InvalidInputError

__all__ = ["canonical_source_url", "parse_url", "secret_parameter", "source_url", "validate_https"]

SECRET_PARAMETERS = frozenset(
    {
        "token",
        "access_token",
        "id_token",
        "refresh_token",
        "api_key",
        "apikey",
        "key",
        "secret",
        "client_secret",
        "password",
        "passwd",
        "pwd",
        "auth",
        "authorization",
        "session",
        "sessionid",
        "sig",
        "signature",
        "x-amz-signature",
        "x-amz-credential",
        "x-goog-signature",
        "code",
    }
)

_X_HOSTS = frozenset({"x.com", "www.x.com", "twitter.com", "www.twitter.com", "mobile.twitter.com"})
_X_PATH = re.compile(
    r"/(?:[A-Za-z0-9_]{1,15}|i/web)/status/(\d+)(?:/(?:photo|video)/\d+)?/?", re.ASCII
)
_DIGITS = re.compile(r"\d+", re.ASCII)


def parse_url(value: str) -> Any:
    """Parse with the WHATWG algorithm; an unparseable URL is ``Invalid URL``."""
    from ada_url import URL

    try:
        return URL(value)
    except ValueError:
        raise InvalidInputError("Invalid URL") from None


def secret_parameter(url: Any) -> str | None:
    """The first credential-named query (or fragment) parameter of a parsed URL."""
    for part in (url.search, url.hash):
        text = part[1:] if part else ""
        if not text:
            continue
        for name, _ in parse_qsl(text, keep_blank_values=True):
            lowered = str(name).strip().lower()
            if lowered in SECRET_PARAMETERS:
                return lowered
    return None


def validate_https(value: str, what: str, https_message: str | None = None) -> str:
    """Return the normalized href of an https URL without credentials or secrets.

    ``what`` names the URL in messages (``Source URLs``, ``Image URLs``, ``Remote URLs``);
    ``https_message`` overrides the wording of the https/credentials error.
    """
    url = parse_url(value)
    if url.protocol != "https:" or url.username or url.password:
        raise InvalidInputError(
            https_message or f"{what} must use HTTPS without embedded credentials."
        )
    secret = secret_parameter(url)
    if secret is not None:
        raise InvalidInputError(
            f'{what} must not carry secret query parameters; remove "{secret}".'
        )
    return str(url.href)


def canonical_source_url(provider: str, source_id: str, url: str) -> str:
    """Rewrite an X/Twitter status link to ``https://x.com/i/web/status/<id>``."""
    if provider != "x" or not url or not _DIGITS.fullmatch(source_id):
        return url
    try:
        parsed = parse_url(url)
    except InvalidInputError:
        return url
    if parsed.protocol != "https:" or parsed.username or parsed.password:
        return url
    if parsed.hostname not in _X_HOSTS:
        return url
    match = _X_PATH.fullmatch(parsed.pathname)
    if match is None or match.group(1) != source_id:
        return url
    return f"https://x.com/i/web/status/{source_id}"


def source_url(provider: str, source_id: str, value: str) -> str:
    """Validate a resource's ``source.url`` and return its stored form."""
    return canonical_source_url(provider, source_id, validate_https(value, "Source URLs"))
