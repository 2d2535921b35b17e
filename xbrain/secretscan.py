"""Secrets kept out: every text a write stores is scanned for likely credentials.

The detectors are detect-secrets' provider rules (AWS, GitHub, GitLab, OpenAI, Stripe,
Slack, private keys, JWTs, …), plus the current OpenAI key forms it predates. Its
entropy and keyword detectors are left out on purpose: hashes, UUIDs and base64 images
are high-entropy too, and a memory is full of them. Importing detect-secrets takes
~90 ms, so a text is first matched against a cheap filter that every detector's
pattern implies, and the library is imported only when that filter fires.

A finding names the field and the detector, never the value. Below everything but
``errors`` (a base module).
"""

from __future__ import annotations

import contextlib
import re
import sys
import types
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from .errors import InvalidInputError

__all__ = ["DETECTORS", "Finding", "check_texts", "record_texts", "scan_text", "validate_allowed"]

# name on the command line → detect-secrets plugin (module, class)
_PLUGINS = {
    "aws": ("aws", "AWSKeyDetector"),
    "github": ("github_token", "GitHubTokenDetector"),
    "gitlab": ("gitlab_token", "GitLabTokenDetector"),
    "openai": ("openai", "OpenAIDetector"),
    "stripe": ("stripe", "StripeDetector"),
    "slack": ("slack", "SlackDetector"),
    "private-key": ("private_key", "PrivateKeyDetector"),
    "jwt": ("jwt", "JwtTokenDetector"),
    "sendgrid": ("sendgrid", "SendGridDetector"),
    "twilio": ("twilio", "TwilioKeyDetector"),
    "mailchimp": ("mailchimp", "MailchimpDetector"),
    "npm": ("npm", "NpmDetector"),
    "pypi": ("pypi_token", "PypiTokenDetector"),
    "square": ("square_oauth", "SquareOAuthDetector"),
    "azure-storage": ("azure_storage_key", "AzureStorageKeyDetector"),
    "discord": ("discord", "DiscordBotTokenDetector"),
    "telegram": ("telegram_token", "TelegramBotTokenDetector"),
    "basic-auth": ("basic_auth", "BasicAuthDetector"),
}
DETECTORS = tuple(sorted(_PLUGINS))

# OpenAI's project, service-account and admin keys (detect-secrets 1.5 knows only the
# older "T3BlbkFJ" form); checked here, without the library. ``\bsk-`` written literal
# first (the engine scans for a literal fast), the word boundary as a look-behind.
_OPENAI = re.compile(r"sk-(?<!\wsk-)(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,}")

# What any detector's match contains; bounded quantifiers only (linear on any text). The
# regex engine tries each branch at each position of a text: the look-ahead first lets
# through only a character some branch starts with, and the three branches that began
# with a character class start with their literal, the class checked behind it (a
# fixed-width look-behind: a match exactly where the plain branch has one). The same
# matches as the plain alternation (a property test), four times faster on prose.
_MAYBE = re.compile(
    r"(?=[AaGgSsKkXxHhPpeMNO:-])(?:"
    r"(?:A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA)[0-9A-Z]{16}"
    r"|(?i:aws)"
    r"|gh[pousr]_[A-Za-z0-9_]{36}"
    r"|gl[a-z]{1,6}-|GR1348941"
    r"|sk-[A-Za-z0-9_-]{20}"
    r"|k_live_(?<=[rs]k_live_)"
    r"|(?i:xox[abposr]-|hooks\.slack\.com)"
    r"|PRIVATE KEY|PuTTY-User-Key|SSH2 ENCRYPTED"
    r"|eyJ[A-Za-z0-9_=-]{1,64}\."
    r"|SG\.[A-Za-z0-9_-]{22}\."
    r"|[AS][CK][a-z0-9]{32}"
    r"|-us[0-9](?<=[0-9a-z]{32}-us[0-9])"
    r"|:_authToken="
    r"|pypi-AgE"
    r"|sq0csp-"
    r"|AccountKey="
    r"|[MNO][a-zA-Z0-9_-]{23,25}\.[a-zA-Z0-9_-]{6}\."
    r"|:(?<=[0-9]{8}:)[0-9A-Za-z_-]{35}"
    r"|://[^\s@/]{1,256}:[^\s@/]{0,256}@"
    r")"
)
# A line is scanned in windows: detect-secrets' patterns are unbounded, and some take
# time in the square of a crafted line's length; keys are far shorter than the overlap.
_WINDOW = 4096
_DOCUMENTED = "EXAMPLE"
_OVERLAP = 1100


@dataclass(frozen=True)
class Finding:
    """A likely secret: where (the field) and what kind (the detector), never the value."""

    field: str
    detector: str


def validate_allowed(names: Iterable[str]) -> frozenset[str]:
    """The detector names given to ``--allow-secret``, checked."""
    allowed = frozenset(name.strip().lower() for name in names)
    unknown = sorted(allowed - set(DETECTORS))
    if unknown:
        raise InvalidInputError(
            f'Unknown secret detector "{unknown[0][:40]}"; use one of: {", ".join(DETECTORS)}.'
        )
    return allowed


def scan_text(text: str) -> list[str]:
    """The detectors that find a likely secret in ``text`` (sorted, each once)."""
    found = {"openai"} if _OPENAI.search(text) else set()
    if _MAYBE.search(text):
        for name, plugin in _plugins():
            if name not in found and any(_hits(plugin, window) for window in _windows(text)):
                found.add(name)
    return sorted(found)


def record_texts(record: Any, prefix: str = "") -> list[tuple[str, str]]:
    """Every string in a record with its field path (``content``, ``tags[1]``, ``a.b``)."""
    found: list[tuple[str, str]] = []
    _texts(record, prefix, found)
    return found


def _texts(value: Any, prefix: str, found: list[tuple[str, str]]) -> None:
    if isinstance(value, str):
        found.append((prefix or "value", value))
    elif isinstance(value, dict):
        for key, item in value.items():
            _texts(item, f"{prefix}.{key}" if prefix else str(key), found)
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            _texts(item, f"{prefix}[{index}]", found)


def check_texts(texts: Iterable[tuple[str, str]], allowed: frozenset[str]) -> list[Finding]:
    """Refuse the first likely secret not in ``allowed``; the allowed ones found.

    The texts are first searched together, one line apart: no filter pattern matches a
    line break or is anchored, so a text the filters find nothing in joined with the
    others holds nothing on its own either (then nothing is scanned field by field)."""
    items = texts if isinstance(texts, list) else list(texts)
    joined = "\n".join([text for _, text in items])
    if _OPENAI.search(joined) is None and _MAYBE.search(joined) is None:
        return []
    overridden: list[Finding] = []
    for field, text in items:
        for detector in scan_text(text):
            if detector not in allowed:
                raise InvalidInputError(
                    f'Field "{field[:80]}" looks like it holds a secret ({detector}); remove '
                    f"it, or pass --allow-secret {detector} if it is meant to be stored."
                )
            overridden.append(Finding(field, detector))
    return overridden


def _windows(text: str) -> Iterator[str]:
    for line in text.splitlines() or [text]:
        if len(line) <= _WINDOW:
            yield line
            continue
        for start in range(0, len(line), _WINDOW - _OVERLAP):
            yield line[start : start + _WINDOW]


def _hits(plugin: Any, text: str) -> bool:
    # providers' documentation keys say so (AWS's AKIA…EXAMPLE): pages quote them
    return any(_DOCUMENTED not in found for found in plugin.analyze_string(text))


_LOADED: list[tuple[str, Any]] = []


def _plugins() -> list[tuple[str, Any]]:
    """detect-secrets' detectors, imported on first need."""
    if not _LOADED:
        try:
            with _requests_stood_in():
                loaded = _load_plugins()
        except (AttributeError, ImportError):  # a detect-secrets wanting more of requests
            for name in [m for m in sys.modules if m.split(".")[0] == "detect_secrets"]:
                del sys.modules[name]  # (what loaded beside the stand-in: loaded again)
            loaded = _load_plugins()
        _LOADED.extend(loaded)  # all or nothing: a failed load leaves none half loaded
    return _LOADED


def _load_plugins() -> list[tuple[str, Any]]:
    import importlib

    loaded = []
    for name, (module, cls) in sorted(_PLUGINS.items()):
        plugin = importlib.import_module(f"detect_secrets.plugins.{module}")
        loaded.append((name, getattr(plugin, cls)()))
    return loaded


@contextlib.contextmanager
def _requests_stood_in() -> Iterator[None]:
    """detect-secrets imports ``requests`` (two thirds of its ~85 ms import) only to
    verify a secret with its provider, which xbrain never asks (no network): while its
    plugins load, unless ``requests`` is loaded already, a stand-in holding only its
    exception type takes its place, and is removed afterwards (a later ``import
    requests`` loads the real one)."""
    if "requests" in sys.modules:
        yield
        return
    stand_in = types.ModuleType("requests")
    error = type("RequestException", (OSError,), {})
    stand_in.exceptions = types.SimpleNamespace(RequestException=error)  # type: ignore[attr-defined]
    sys.modules["requests"] = stand_in
    try:
        yield
    finally:
        if sys.modules.get("requests") is stand_in:
            del sys.modules["requests"]
