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
    ("text", "expected"),
    [
        ("a." * 50_000, None),  # a scheme's characters at every word boundary
        ("!x:" * 40_000, None),  # a user and a password at every start
        ("!x" * 60_000, None),
        ("a" * 120_000, None),
        ("?a" * 60_000, None),  # a parameter's start inside every key
        ("x://" + "a:" * 60_000, None),
        # and text that keeps every scan busy, redacted all along
        ("!a:b@h:" * 20_000, "***@h:" + "!***@h:" * 19_999),  # ! may open the first
        ("x.y://u:p@" * 20_000, "x.y://***@" * 20_000),
        ("?token=x&" * 20_000, "?token=***&" * 20_000),  # the pattern: 29 s
    ],
)
def test_long_text_made_against_the_patterns_never_reaches_them(
    text: str, expected: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each scan runs its small patterns at positions that only move forward: what they
    read in all adds up to a few times the text (the patterns themselves read it once
    from every start, the square of 120,000 characters), with no clock involved."""
    read = 0

    class Counting:
        def __init__(self, pattern: re.Pattern[str]) -> None:
            self.pattern = pattern

        def __getattr__(self, name: str) -> object:
            return getattr(self.pattern, name)

        def _count(self, found: re.Match[str] | None, text: str, pos: int, end: int) -> None:
            nonlocal read
            read += (found.end() if found else min(end, len(text))) - pos + 1

        def search(self, text: str, pos: int = 0, end: int = 2**62) -> re.Match[str] | None:
            found = self.pattern.search(text, pos, end)
            self._count(found, text, pos, end)
            return found

        def match(self, text: str, pos: int = 0, end: int = 2**62) -> re.Match[str] | None:
            found = self.pattern.match(text, pos, end)
            self._count(found, text, pos, pos + 1 if found is None else end)
            return found

    for name in dir(redact):
        if isinstance(getattr(redact, name), re.Pattern) and name != "_WORDS":
            monkeypatch.setattr(redact, name, Counting(getattr(redact, name)))
    assert redact_url(text) == (text if expected is None else expected)
    assert read <= 6 * len(text) + 100
