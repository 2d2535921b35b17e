"""The secret scan of a batch: all its texts are searched at once by the filters, and a
key anywhere in it is still found, in the field and record it is in."""

from __future__ import annotations

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
TEXTS = st.lists(st.sampled_from(PIECES), max_size=40).map("".join)


def _filters(text: str) -> bool:
    """What ``scan_text`` searches a text with before it looks further."""
    return bool(secretscan._OPENAI.search(text) or secretscan._MAYBE.search(text))


@settings(max_examples=3000, deadline=None)
@given(TEXTS)
def test_the_filter_split_in_patterns_finds_exactly_what_the_alternation_finds(
    text: str,
) -> None:
    assert secretscan._maybe_any(text) == _filters(text)


@pytest.mark.parametrize(
    "text",
    [
        *FAKE_KEYS.values(),
        "a" * 32 + "-us1",
        "a" * 31 + "-us1",
        "12345678:" + "a" * 35,
        "1234567:" + "a" * 35,
        "123456789012:" + "b" * 40,
        "rk_live_",
        "xk_live_",
        "M" + "a" * 24 + "." + "b" * 6 + ".",
        "https://user:pw@example.com",
        "SG." + "a" * 22 + ".",
    ],
)
def test_the_filter_split_in_patterns_agrees_on_each_branch(text: str) -> None:
    assert secretscan._maybe_any(text) == _filters(text)
    assert secretscan._maybe_any(f"one\n{text}\nthree") == _filters(text)


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
