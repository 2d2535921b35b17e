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


_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/?#\s@]*@")
_SCP_USERINFO = re.compile(r"(?<![\w/:@.-])[^\s/@:]+:[^\s/@]*@(?=[^\s/:@]+:)")
_PARAMETER = re.compile(r"([?&;#])([^=&;#\s]+)=([^&;#\s]*)")


def redact_url(text: str) -> str:
    """``text`` with URL userinfo and secret parameter values replaced by ``***``.

    Applied to every message that may quote a URL (remote add, clone, fetch, push).
    """
    text = _USERINFO.sub(lambda m: m.group(1) + "***@", text)
    text = _SCP_USERINFO.sub("***@", text)
    return _PARAMETER.sub(
        lambda m: f"{m.group(1)}{m.group(2)}=***" if is_secret_name(m.group(2)) else m.group(0),
        text,
    )
