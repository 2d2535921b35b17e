"""Resource validation: the original's order and messages, plus SPEC §3 decisions."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import sample
from xbrain.errors import InvalidInputError
from xbrain.kinds.model import normalize_resource
from xbrain.timestamps import parse_timestamp


def error_of(raw: Any) -> str:
    with pytest.raises(InvalidInputError) as info:
        normalize_resource(raw)
    return info.value.message


def with_source(**changes: Any) -> dict[str, Any]:
    data = sample()
    data["source"] = {**data["source"], **changes}
    return data


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ([], "Invalid resource/source."),
        ({"source": "x"}, "Invalid resource/source."),
        (
            with_source(provider=1),
            "Invalid source.provider; expected a string of at most 64 characters.",
        ),
        (
            with_source(provider="p" * 65),
            "Invalid source.provider; expected a string of at most 64 characters.",
        ),
        (with_source(id=None), "Invalid source.id; expected a string of at most 512 characters."),
        (with_source(provider="-bad"), "A stable source provider and source ID are required."),
        (with_source(id="   "), "A stable source provider and source ID are required."),
        (with_source(url=5), "Invalid source.url; expected a string of at most 4096 characters."),
        (with_source(url=""), "Invalid URL"),
        (with_source(url="not a url"), "Invalid URL"),
        (
            with_source(url="http://example.com/"),
            "Source URLs must use HTTPS without embedded credentials.",
        ),
        (
            with_source(url="javascript:alert(1)"),
            "Source URLs must use HTTPS without embedded credentials.",
        ),
        (
            with_source(url="https://u:p@example.com/"),
            "Source URLs must use HTTPS without embedded credentials.",
        ),
        (sample(id="resource_" + "0" * 64), "Resource ID does not match its source."),
        (sample(id=None), "Resource ID does not match its source."),
        (sample(title="t" * 501), "Invalid title; expected a string of at most 500 characters."),
        (sample(text=None), "Invalid text; expected a string of at most 50000 characters."),
        (sample(summary=3), "Invalid summary; expected a string of at most 10000 characters."),
        (sample(purpose=[]), "Invalid purpose; expected a string of at most 10000 characters."),
        (sample(useWhen="x"), "Invalid useWhen."),
        (sample(useWhen=["x"] * 41), "Invalid useWhen."),
        (sample(useWhen=[1]), "Invalid useWhen; expected a string of at most 2000 characters."),
        (
            sample(limitations=["y" * 2001]),
            "Invalid limitations; expected a string of at most 2000 characters.",
        ),
        (
            sample(savedReason=1),
            "Invalid savedReason; expected a string of at most 10000 characters.",
        ),
        (sample(updatedAt="yesterday"), "Invalid updatedAt; use an ISO timestamp."),
    ],
)
def test_validation_messages(raw: Any, message: str) -> None:
    assert error_of(raw) == message


def test_first_failure_wins() -> None:
    raw = sample(title=1, text=2)
    raw["source"]["url"] = "http://insecure.example/"
    assert error_of(raw) == "Source URLs must use HTTPS without embedded credentials."


def test_missing_saved_reason_is_an_error() -> None:
    raw = sample()
    del raw["savedReason"]
    assert error_of(raw).startswith("Missing savedReason")  # issue 12, item 8


def test_lengths_count_utf16_units_before_trim() -> None:
    assert normalize_resource(sample(title="😀" * 250)).resource["title"] == "😀" * 250
    assert error_of(sample(title="😀" * 250 + "a")).startswith("Invalid title")
    assert error_of(sample(title=" " * 501)).startswith("Invalid title")


def test_normalization() -> None:
    raw = sample(
        title="  spaced\u3000",
        useWhen=[" a ", "", "a", "b", "\ufeff"],
        savedReason="  ",
        extra=1,
        usewhen=["typo"],
    )
    raw["source"] = {
        "provider": " WEB ",
        "id": " fictional-dialog-guide ",
        "url": " https://Example.COM:443 ",
        "x": 1,
    }
    result = normalize_resource(raw)
    resource = result.resource
    assert list(resource) == [
        "id",
        "source",
        "title",
        "text",
        "summary",
        "purpose",
        "useWhen",
        "limitations",
        "savedReason",
        "updatedAt",
    ]
    assert resource["id"].startswith("resource_e6030e7a")
    assert resource["source"] == {
        "provider": "web",
        "id": "fictional-dialog-guide",
        "url": "https://example.com/",
    }
    assert resource["title"] == "spaced"
    assert resource["useWhen"] == ["a", "b"]
    assert resource["savedReason"] == ""
    assert result.dropped == ("extra", "usewhen", "source.x")


@pytest.mark.parametrize(
    "url",
    [
        "https://example.com/?token=abc",
        "https://example.com/?A=1&Access_Token=abc",
        "https://example.com/?X-Amz-Signature=1",
        "https://example.com/cb?code=123",
        "https://example.com/#access_token=abc&x=1",
        "https://example.com/?%74oken=abc",
    ],
)
def test_secret_query_parameters_rejected(url: str) -> None:
    message = error_of(with_source(url=url))
    assert message.startswith("Source URLs must not carry secret query parameters")


def test_harmless_query_kept() -> None:
    url = "https://example.com/search?q=keyboard&page=2#section"
    assert normalize_resource(with_source(url=url)).resource["source"]["url"] == url


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (
            "https://twitter.com/fictional/status/123456789?s=20",
            "https://x.com/i/web/status/123456789",
        ),
        (
            "https://mobile.twitter.com/i/status/123456789/photo/1",
            "https://x.com/i/web/status/123456789",
        ),
        ("https://x.com:8443/i/web/status/123456789/#frag", "https://x.com/i/web/status/123456789"),
        ("https://m.twitter.com/a/status/123456789", "https://m.twitter.com/a/status/123456789"),
        ("https://x.com/fictional/status/999", "https://x.com/fictional/status/999"),
        (
            "https://x.com/abcdefghijklmnop/status/123456789",
            "https://x.com/abcdefghijklmnop/status/123456789",
        ),
        ("https://x.com/a/Status/123456789", "https://x.com/a/Status/123456789"),
        (
            "https://x.com/a/status/123456789/analytics",
            "https://x.com/a/status/123456789/analytics",
        ),
        (
            "https://example.com/fictional/status/123456789",
            "https://example.com/fictional/status/123456789",
        ),
    ],
)
def test_x_canonical_urls(url: str, expected: str) -> None:
    raw = sample()
    raw["source"] = {"provider": "x", "id": "123456789", "url": url}
    assert normalize_resource(raw).resource["source"]["url"] == expected


def test_x_canonicalization_needs_numeric_id_and_x_provider() -> None:
    raw = sample()
    raw["source"] = {
        "provider": "web",
        "id": "123456789",
        "url": "https://x.com/a/status/123456789",
    }
    assert normalize_resource(raw).resource["source"]["url"] == "https://x.com/a/status/123456789"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2026-10-01T12:00", "2026-10-01T12:00:00.000Z"),
        ("2026-10-01T12:00:00+08:00", "2026-10-01T04:00:00.000Z"),
        ("2026-10-01T12:00:00.123456Z", "2026-10-01T12:00:00.123Z"),
        ("2026-10-01T12:00:00.1-01:30", "2026-10-01T13:30:00.100Z"),
        ("2024-02-29T00:00:00Z", "2024-02-29T00:00:00.000Z"),
    ],
)
def test_timestamps_accepted(value: str, expected: str) -> None:
    assert parse_timestamp(value) == expected


@pytest.mark.parametrize(
    "value",
    [
        "2026-02-30T00:00:00Z",
        "2026-13-01T00:00:00Z",
        "2026-10-01T24:00:00Z",
        "2026-10-01T",
        "2026-10-01Tfoo",
        "2026-10-01T12:00:00 GMT+0100",
        "2026-10-01",
        "2026-10-01T12:00:00+24:00",
        1_700_000_000,
        None,
    ],
)
def test_timestamps_rejected(value: Any) -> None:
    with pytest.raises(InvalidInputError, match=r"^Invalid deletedAt; use an ISO timestamp\.$"):
        parse_timestamp(value, "deletedAt")


@pytest.mark.parametrize("bad", ["a\x00b", "lone \ud800 surrogate"])
def test_invalid_text_rejected(bad: str) -> None:
    assert "NUL or unpaired surrogates" in error_of(sample(text=bad))
