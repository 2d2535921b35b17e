"""Redaction scans text once: it redacts exactly what its three patterns match.

The patterns, run as regular expressions, took time in proportion to the square of the
text on text made for it; these tests hold the scanners to them on every kind of short
text, and show that long text made against the patterns never reaches them.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from xbrain import redact
from xbrain.redact import is_secret_name, redact_url

USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/?#\s@]*@")
SCP_USERINFO = re.compile(r"(?<![\w/:@.-])[^\s/@:]+:[^\s/@]*@(?=[^\s/:@]+:)")
PARAMETER = re.compile(r"([?&;#])([^=&;#\s]+)=([^&;#\s]*)")


def by_patterns(text: str) -> str:
    """What redaction did when it ran the patterns (the oracle)."""
    text = USERINFO.sub(lambda m: m.group(1) + "***@", text)
    text = SCP_USERINFO.sub("***@", text)
    return PARAMETER.sub(
        lambda m: f"{m.group(1)}{m.group(2)}=***" if is_secret_name(m.group(2)) else m.group(0),
        text,
    )


# every character the patterns treat apart (letters that fold to ASCII, ſ and K, too),
# and the pieces their matches are made of
PIECES = [
    *"ab1Z_é+.-:/@?&;#= \n\tx!",
    *("\u017f", "\u212a", "token", "key", "://", "https", "git@", "u:p@", "h:", "?=", "//"),
]
texts = st.lists(st.sampled_from(PIECES), max_size=30).map("".join)


# and, denser, the pieces of each pattern alone
FOCUSED = [
    ["?", "&", ";", "#", "=", "token", "a", " ", "key"],  # parameters
    ["a", "1", ".", "+", "-", "_", "é", ":", "//", "://", "@", "/", " ", "?", "\u017f"],
    ["a", ":", "@", "/", " ", "!", ".", "-", "_", "é", "x:"],  # scp-like userinfo
]
focused = st.sampled_from(FOCUSED).flatmap(
    lambda pieces: st.lists(st.sampled_from(pieces), max_size=14).map("".join)
)


@settings(max_examples=3000)
@given(st.one_of(texts, focused))
@example("1a://u:p@h")  # a scheme must start at a word boundary
@example("x.https://u:p@h ſ://u@h -a://u@h")
@example("?=?token=x ?a&token=y #=;key=z")  # an empty name is no parameter; & starts one
@example("a:b@h:p /u:p@h:p !u:p@h:p u:p@h/p u:p@:h")  # the host must end in a colon
@example(":a:b@h:p a::@h:")
def test_the_scan_redacts_what_the_patterns_match(text: str) -> None:
    assert redact_url(text) == by_patterns(text)


@pytest.mark.parametrize(
    "text",
    [
        "a." * 50_000,  # a scheme's characters at every word boundary
        "!x:" * 40_000,  # a user and a password at every start
        "!x" * 60_000,
        "a" * 120_000,
        "?a" * 60_000,  # a parameter's start inside every key
        "x://" + "a:" * 60_000,
    ],
)
def test_long_text_made_against_the_patterns_never_reaches_them(
    text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each scan runs its small patterns at positions that only move forward, so the
    scan of 120,000 characters is over in a moment (by the patterns: minutes)."""
    calls = 0
    real_search = re.Pattern.search

    class Counting:
        def __init__(self, pattern: re.Pattern[str]) -> None:
            self.pattern = pattern

        def __getattr__(self, name: str) -> object:
            return getattr(self.pattern, name)

        def search(self, *args: object) -> re.Match[str] | None:
            nonlocal calls
            calls += 1
            return real_search(self.pattern, *args)  # type: ignore[arg-type]

    for name in ("_USERINFO_END", "_SCP_START", "_PARAMETER_START", "_KEY_END", "_VALUE_END"):
        monkeypatch.setattr(redact, name, Counting(getattr(redact, name)))
    assert redact_url(text) == text or "***" in redact_url(text)
    assert calls <= 2 * len(text) + 10  # searches only move forward: linear, not squared
