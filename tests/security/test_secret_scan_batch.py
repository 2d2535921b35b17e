"""The secret scan's cheap filter, and a batch's scan: a record's texts are searched at
once by the filters, and a key anywhere in a batch is still found, in its field."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xbrain.secretscan as secretscan
from tests.conftest import Result, make
from tests.security.test_secret_scan import FAKE_KEYS, _commits
from xbrain.secretscan import check_texts

Run = Callable[..., Result]

# one piece for each branch of the filter, and look-alikes around its edges
PIECES = [
    "AKIA",
    "A3TX",
    "ASIA",
    "aws",
    "AwS",
    "ghp_",
    "gho_",
    "glpat-",
    "GR1348941",
    "sk-",
    "rk_live_",
    "sk_live_",
    "k_live_",
    "xoxb-",
    "HOOKS.slack.com",
    "PRIVATE KEY",
    "PuTTY-User-Key",
    "SSH2 ENCRYPTED",
    "eyJ",
    "SG.",
    "AC",
    "SK",
    "-us",
    ":_authToken=",
    "pypi-AgE",
    "sq0csp-",
    "AccountKey=",
    "M",
    ".",
    ":",
    "://",
    "@",
    "/",
    " ",
    "\n",
    "0123456789",
    "12345678",
    "abcdef0123456789",
    "ABCDEFGHIJKLMNOP",
    "Q7z_-",
    "proj-",
]
TEXTS = st.lists(
    st.sampled_from([*PIECES, "ſ", "\u212a", "A" * 20, "a" * 32, "é", "_", "sk-proj-", "x" * 40]),
    max_size=40,
)

# the filter as first written: one plain alternation (each detector's pattern implies it)
PLAIN = re.compile(
    r"(?:A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA)[0-9A-Z]{16}"
    r"|(?i:aws)"
    r"|gh[pousr]_[A-Za-z0-9_]{36}"
    r"|gl[a-z]{1,6}-|GR1348941"
    r"|sk-[A-Za-z0-9_-]{20}"
    r"|[rs]k_live_"
    r"|(?i:xox[abposr]-|hooks\.slack\.com)"
    r"|PRIVATE KEY|PuTTY-User-Key|SSH2 ENCRYPTED"
    r"|eyJ[A-Za-z0-9_=-]{1,64}\."
    r"|SG\.[A-Za-z0-9_-]{22}\."
    r"|[AS][CK][a-z0-9]{32}"
    r"|[0-9a-z]{32}-us[0-9]"
    r"|:_authToken="
    r"|pypi-AgE"
    r"|sq0csp-"
    r"|AccountKey="
    r"|[MNO][a-zA-Z0-9_-]{23,25}\.[a-zA-Z0-9_-]{6}\."
    r"|[0-9]{8,10}:[0-9A-Za-z_-]{35}"
    r"|://[^\s@/]{1,256}:[^\s@/]{0,256}@"
)


# and the OpenAI key pattern as first written
PLAIN_OPENAI = re.compile(r"\bsk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,}")


def _same(text: str) -> None:
    """The filters find a match in ``text`` exactly when the plain patterns do."""
    assert (secretscan._MAYBE.search(text) is None) == (PLAIN.search(text) is None), text
    found, plain = secretscan._OPENAI.search(text), PLAIN_OPENAI.search(text)
    assert (found and found.span()) == (plain and plain.span()), text


@settings(max_examples=3000, deadline=None)
@given(TEXTS)
def test_the_quick_filter_finds_exactly_what_the_plain_alternation_finds(
    pieces: list[str],
) -> None:
    _same("".join(pieces))
    _same("\n".join(pieces))


BRANCHES = [  # (text, whether the filter fires): each branch, and a near miss of some
    *((key, True) for key in FAKE_KEYS.values()),
    ("a" * 32 + "-us1", True),
    ("a" * 31 + "-us1", False),
    ("A" * 32 + "-us1", False),
    ("12345678:" + "a" * 35, True),
    ("1234567:" + "a" * 35, False),
    ("123456789012:" + "b" * 40, True),
    ("12345678:" + "a" * 34, False),
    ("rk_live_", True),
    ("sk_live_", True),
    ("xk_live_", False),
    ("M" + "a" * 24 + "." + "b" * 6 + ".", True),
    ("https://user:pw@example.com", True),
    ("https://example.com/a:b", False),
    ("SG." + "a" * 22 + ".", True),
    ("AC" + "0" * 32, True),
    ("HOOKS.SLACK.COM", True),
    ("AWS", True),
    ("plain words, nothing else", False),
]


@pytest.mark.parametrize(("text", "hit"), BRANCHES)
def test_the_quick_filter_agrees_on_each_branch(text: str, hit: bool) -> None:
    assert (secretscan._MAYBE.search(f"x {text} y") is not None) == hit
    for variant in (text, f"one\n{text}\nthree", text[1:], text[:-1], text * 2):
        _same(variant)


@pytest.mark.parametrize(
    ("before", "hit"),
    [("", True), (" ", True), ("-", True), ("x", False), ("é", False), ("_", False)],
)
def test_an_openai_key_is_found_after_a_word_boundary_only(before: str, hit: bool) -> None:
    text = f"key: {before}{FAKE_KEYS['openai']} end"
    assert (secretscan._OPENAI.search(text) is not None) == hit
    _same(text)


def test_texts_the_filters_find_nothing_in_are_not_scanned_one_by_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    scanned: list[str] = []
    plain = secretscan.scan_text
    monkeypatch.setattr(secretscan, "scan_text", lambda text: scanned.append(text) or plain(text))
    texts = [(f"field{n}", f"plain words number {n}, nothing secret") for n in range(500)]
    assert check_texts(texts, frozenset()) == []
    assert scanned == []
    # one text that may hold a key: each text is scanned on its own, as before
    texts[321] = ("field321", f"token {FAKE_KEYS['github']}")
    with pytest.raises(secretscan.InvalidInputError, match=r'"field321".*github'):
        check_texts(texts, frozenset())
    allowed = check_texts(texts, frozenset({"github"}))
    assert allowed == [secretscan.Finding("field321", "github")]


@pytest.mark.parametrize("detector", sorted(FAKE_KEYS))
def test_a_key_in_one_record_of_a_batch_refuses_the_batch(
    xb_proc: Run, store_dir: Path, detector: str
) -> None:
    key = FAKE_KEYS[detector]
    assert xb_proc("init").code == 0
    before = _commits(store_dir)
    batch = [make(f"r{n}", text=f"plain text {n}") for n in range(300)]
    batch[211]["limitations"] = ["none", f"key {key} here"]
    put = xb_proc("put", "-", input=batch)
    assert put.code == 4, put.stderr
    assert '"limitations[1]"' in put.stderr and detector in put.stderr
    assert key not in put.stderr + put.stdout
    assert _commits(store_dir) == before
    allowed = xb_proc("put", "-", "--allow-secret", detector, input=batch)
    assert allowed.code == 0, allowed.stderr
    assert allowed.json["added"] == 300
