"""Hypothesis: a plain https URL parsed without ada (``urls.parse_url``'s fast path) reads
exactly as ada reads it. A stored ``source.url`` is ada's ``href``, and a revision hashes
the stored resource, so a single byte apart would change what a put stores."""

from __future__ import annotations

from typing import Any

import pytest
from ada_url import URL
from hypothesis import example, given, settings
from hypothesis import strategies as st

import xbrain.urls as urls
from xbrain.urls import PlainURL, parse_url, source_url, validate_https

FIELDS = ("href", "protocol", "username", "password", "hostname", "host", "port")
FIELDS += ("pathname", "search", "hash")

LABEL = st.text("abcxyz0189-", min_size=1, max_size=8) | st.sampled_from(
    ["xn--nxasmq6b", "a" * 63, "a" * 64, "0x1f", "123", "com", "ex--ample", "-a", "a-"]
)
HOST = st.lists(LABEL, min_size=1, max_size=4).map(".".join) | st.sampled_from(
    ["EXAMPLE.com", "1.2.3.4", "example.com.", "a..b", "ex%41mple.com", "[::1]", "a_b.com"]
)
PIECE = st.text("abzAZ09._~!$&()*+,;=:@/-?#'%\\ \t[]{}|^`\"<>é", max_size=12)
AFTER = st.lists(st.sampled_from(["", "/", "/.", "/..", "/./", "/../", "?", "#"]) | PIECE).map(
    "".join
)
# mostly URLs near the fast path's edge, so most examples take it or only just miss it
NEAR = st.builds(
    "{}{}".format,
    st.lists(st.text("abz09-", min_size=1, max_size=6), min_size=1, max_size=3).map(".".join),
    st.sampled_from([".com", ".a-1", ".z", ""]),
)
SAFE = st.text("abzAZ09._~!$&()*+,;=:@/-?#", max_size=12)
NEAR_URLS = st.builds(
    lambda h, p, q, f: f"https://{h}{p}{q}{f}",
    NEAR,
    st.sampled_from(["", "/", "/a", "/./", "/a/.."]) | SAFE.map(lambda t: "/" + t),
    st.sampled_from(["", "?"]) | SAFE.map(lambda t: "?" + t),
    st.sampled_from(["", "#"]) | SAFE.map(lambda t: "#" + t),
)
URLS = (
    NEAR_URLS | st.builds(lambda h, rest: f"https://{h}{rest}", HOST, AFTER) | st.text(max_size=40)
)


def read(url: Any) -> tuple[str, ...]:
    return tuple(str(getattr(url, name)) for name in FIELDS)


@settings(max_examples=3000)
@given(URLS)
@example("https://example.com")
@example("https://example.com?")
@example("https://example.com/#")
@example("https://example.com/a//b?x=1&y=2;z#frag?x")
@example("https://example.com/items/8")
def test_the_fast_path_reads_as_ada_does(value: str) -> None:
    plain = urls._plain(value)
    if plain is None:
        return
    assert isinstance(parse_url(value), PlainURL)
    assert read(plain) == read(URL(value))
    assert str(plain) == str(URL(value))


@pytest.mark.parametrize(
    "value",
    [
        "https://example.com/dialog-guide",
        "https://example.com/a/b?x=1#top",
        "https://www.x.com/someone/status/123456789",
        "https://example.com",
    ],
)
def test_plain_links_do_not_load_ada(value: str) -> None:
    assert isinstance(parse_url(value), PlainURL)
    assert validate_https(value, "Source URLs") == URL(value).href


@pytest.mark.parametrize(
    ("value", "stored"),
    [
        ("https://EXAMPLE.com/./a/../b", "https://example.com/b"),
        ("https://example.com/a b", "https://example.com/a%20b"),
        ("https://bücher.example/", "https://xn--bcher-kva.example/"),
        ("https://0x7f.1/", "https://127.0.0.1/"),
        ("https://example.com:443/x", "https://example.com/x"),
    ],
)
def test_everything_else_is_ada_s(value: str, stored: str) -> None:
    assert urls._plain(value) is None
    assert source_url("web", "a", value) == stored


def test_secret_parameters_are_found_on_the_fast_path() -> None:
    with pytest.raises(Exception, match='remove "token"'):
        validate_https("https://example.com/x?a=1&token=abc", "Source URLs")
    with pytest.raises(Exception, match='remove "api_key"'):
        validate_https("https://example.com/x;api_key=abc", "Source URLs")
    assert source_url("x", "123", "https://twitter.com/someone/status/123") == (
        "https://x.com/i/web/status/123"
    )
