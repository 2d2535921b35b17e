"""Secrets never appear in output: which parameter names are secret, and URL redaction.

Below everything else (no xbrain imports), so error messages can use it too.
"""

from __future__ import annotations

import itertools
import re

__all__ = ["SECRET_PARAMETERS", "is_secret_name", "redact_url"]

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

# Words that make any name a credential wherever they stand in it (access-token,
# X-Amz-Security-Token, client_secret, db.password, privateKey, …).
_SECRET_WORDS = frozenset(
    {
        "token",
        "tokens",
        "secret",
        "secrets",
        "password",
        "passwd",
        "passphrase",
        "pwd",
        "signature",
        "credential",
        "credentials",
        "apikey",
        "sessionid",
        "authorization",
        "cookie",
    }
)
_SECRET_JOINED = frozenset(name.replace("_", "").replace("-", "") for name in SECRET_PARAMETERS) | {
    "privatekey",
    "accesskey",
    "secretkey",
    "authkey",
    "bearer",
}
_WORDS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


def is_secret_name(name: str) -> bool:
    """One rule for every URL parameter, argument and config key: is ``name`` a credential?

    Case- and separator-insensitive: ``API_KEY``, ``api-key``, ``apiKey`` and ``key[]``
    are the same name; a name containing a credential word (``X-Amz-Security-Token``,
    ``access-token``, ``db.password``) is one too.
    """
    text = str(name).strip().removesuffix("[]")
    words = [w.lower() for w in _WORDS.findall(text)]
    joined = "".join(words)
    if not joined:
        return False
    if joined in _SECRET_JOINED or any(w in _SECRET_WORDS for w in words):
        return True
    # two-word credentials written apart: api key, access key, private key, auth token
    pairs = {a + b for a, b in itertools.pairwise(words)}
    return bool(pairs & _SECRET_JOINED)


# What is redacted, as patterns (the tests hold the scanners below to them exactly):
#   (?i)\b([a-z][a-z0-9+.-]*://)[^/?#\s@]*@                 URL userinfo → scheme://***@
#   (?<![\w/:@.-])[^\s/@:]+:[^\s/@]*@(?=[^\s/:@]+:)         scp-style user:password@host:
#   ([?&;#])([^=&;#\s]+)=([^&;#\s]*)                         a secret parameter's value → ***
# Run as regular expressions they take time in proportion to the square of the text on
# text made for it ("a." * 50,000; a 60 KB argument quoted in an MCP tool's error took
# 6 s, 1 MB most of an hour), so they are scanned once each, left to right, instead.
_SCHEME_CHAR = re.compile(r"(?i)[a-z0-9+.-]")
_SCHEME_FIRST = re.compile(r"(?i)[a-z]")
_WORD_CHAR = re.compile(r"\w")
_USERINFO_END = re.compile(r"[/?#@\s]")
_SCP_SEPARATOR = re.compile(r"[\s/@]")
_SCP_HOST = re.compile(r"[^\s/:@]+:")
_SCP_START = re.compile(r"(?<![\w/:@.-])[^:]")
_PARAMETER_START = re.compile(r"[?&;#]")
_KEY_END = re.compile(r"[=&;#\s]")
_VALUE_END = re.compile(r"[&;#\s]")


def redact_url(text: str) -> str:
    """``text`` with URL userinfo and secret parameter values replaced by ``***``, in time
    linear in its length.

    Applied to every message that may quote a URL (remote add, clone, fetch, push) and to
    every error line.
    """
    return _redact_parameters(_redact_scp_userinfo(_redact_userinfo(text)))


def _redact_userinfo(text: str) -> str:
    """``scheme://user:password@`` → ``scheme://***@``."""
    out: list[str] = []
    done = 0  # text[:done] is in out
    at = text.find("://")
    while at != -1:
        start = _scheme_start(text, at, done)
        end = _USERINFO_END.search(text, at + 3)
        if start is not None and end is not None and text[end.start()] == "@":
            out += [text[done : at + 3], "***@"]
            done = end.start() + 1
        at = text.find("://", max(at + 3, done))
    return "".join(out) + text[done:]


def _scheme_start(text: str, at: int, done: int) -> int | None:
    """Where the leftmost scheme ending at ``at`` starts (at or after ``done``): a letter
    at a word boundary followed by scheme characters up to ``at``; None when none does."""
    first = at
    while first > done and _SCHEME_CHAR.match(text, first - 1):
        first -= 1
    for start in range(first, at):
        before = text[start - 1] if start else ""
        boundary = start == 0 or not _WORD_CHAR.match(before)
        if boundary and _SCHEME_FIRST.match(text, start):
            return start
    return None


def _redact_scp_userinfo(text: str) -> str:
    """``user:password@host:path`` → ``***@host:path`` (git's scp-like remote syntax)."""
    out: list[str] = []
    done = begin = 0  # begin: where the run since the last space, / or @ starts
    for separator in _SCP_SEPARATOR.finditer(text):
        at = separator.start()
        first, begin = begin, at + 1
        if text[at] != "@" or at == first:
            continue
        colon = text.rfind(":", first, at)
        if colon == -1 or not _SCP_HOST.match(text, at + 1):
            continue
        start = _SCP_START.search(text, first, colon)
        if start is not None:
            out += [text[done : start.start()], "***@"]
            done = at + 1
    return "".join(out) + text[done:]


def _redact_parameters(text: str) -> str:
    """``?token=value`` → ``?token=***`` for every secret name (:func:`is_secret_name`)."""
    out: list[str] = []
    done = 0
    found = _PARAMETER_START.search(text)
    while found is not None:
        start = found.start()
        key_end = _KEY_END.search(text, start + 1)
        if key_end is None:
            break
        stop = key_end.start()
        if text[stop] == "=" and stop > start + 1:
            value_end = _VALUE_END.search(text, stop + 1)
            end = len(text) if value_end is None else value_end.start()
            if is_secret_name(text[start + 1 : stop]):
                out += [text[done : stop + 1], "***"]
                done = end
            found = _PARAMETER_START.search(text, end)
        else:
            found = _PARAMETER_START.search(text, stop)
    return "".join(out) + text[done:]
