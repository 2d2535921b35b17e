"""URL rules: WHATWG parsing, https only, no credentials, no secrets, canonical X links.

Parsing uses ada (the WHATWG URL parser Node itself uses), so a stored ``href`` is the
same string the original produced. Beyond the original, a URL whose query (or
``#a=b`` fragment) carries a credential-named parameter is rejected.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple
from urllib.parse import unquote

from .errors import InvalidInputError
from .redact import is_secret_name, redact_url

__all__ = [
    "canonical_source_url",
    "is_secret_name",
    "parse_url",
    "redact_url",
    "secret_parameter",
    "source_url",
    "validate_https",
]

_X_HOSTS = frozenset({"x.com", "www.x.com", "twitter.com", "www.twitter.com", "mobile.twitter.com"})
_X_PATH = re.compile(
    r"/(?:[A-Za-z0-9_]{1,15}|i/web)/status/(\d+)(?:/(?:photo|video)/\d+)?/?", re.ASCII
)
_DIGITS = re.compile(r"\d+", re.ASCII)


# An https URL the WHATWG algorithm leaves exactly as it is (a missing path aside, which
# becomes "/"), so a write of a plain link need not load ada: a host of lower-case ASCII
# labels (no "--", so no IDNA; the last label starts with a letter, so no IPv4 number),
# no credentials or port, and a path, query and fragment of characters no
# percent-encode set takes (dot segments are looked at apart).
_SAFE = r"[A-Za-z0-9._~!$&()*+,;=:@/-]"
_PLAIN = re.compile(
    r"https://((?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?)"
    rf"(/{_SAFE}*)?(\?(?:{_SAFE}|\?)*)?(#(?:{_SAFE}|\?)*)?",
    re.ASCII,
)


class PlainURL(NamedTuple):
    """What ada's ``URL`` answers for a URL :data:`_PLAIN` matches (the same strings)."""

    href: str
    hostname: str
    pathname: str
    search: str
    hash: str
    protocol: str = "https:"
    username: str = ""
    password: str = ""
    port: str = ""

    @property
    def host(self) -> str:
        return self.hostname

    def __str__(self) -> str:
        return self.href


def _plain(value: str) -> PlainURL | None:
    """``value`` parsed without ada when WHATWG would change nothing in it, else None."""
    match = _PLAIN.fullmatch(value)
    if match is None:
        return None
    host, path, query, fragment = match.groups(default="")
    if "--" in host or any(part in (".", "..") for part in path.split("/")):
        return None
    path = path or "/"
    href = f"https://{host}{path}{query}{fragment}"
    return PlainURL(
        href, host, path, "" if query == "?" else query, "" if fragment == "#" else fragment
    )


def parse_url(value: str) -> Any:
    """Parse with the WHATWG algorithm; an unparseable URL is ``Invalid URL``."""
    plain = _plain(value)
    if plain is not None:
        return plain
    from ada_url import URL

    try:
        return URL(value)
    except ValueError:
        raise InvalidInputError("Invalid URL") from None


def secret_parameter(url: Any) -> str | None:
    """The first credential-named parameter of a parsed URL.

    Looks at the query and the ``#a=b`` fragment, split on ``&`` and ``;``, and at
    path parameters (``/x;token=…``).
    """
    texts = [part[1:] for part in (url.search, url.hash) if part]
    texts += [seg.split(";", 1)[1] for seg in str(url.pathname).split("/") if ";" in seg]
    for text in texts:
        for piece in re.split(r"[&;]", text):
            name = unquote(piece.split("=", 1)[0])
            if is_secret_name(name):
                return name.strip().lower()
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
