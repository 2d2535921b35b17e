"""Gallery bookmark libraries (``version: 1``): read-only, validated, normalized rows.

Follows the original's gallery reader and row normalization (reference §5.1): ids from
``id_str``/``id``/``tweet_id`` matching ``[A-Za-z0-9_-]{1,128}``, text from
``extended_tweet.full_text``/``full_text``/``text`` without control characters and cut
to 20,000, an https URL (else the canonical status URL for numeric ids), a summary cut
to 4,000 and at most 8 https media entries. The file is only ever read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InvalidInputError, NotFoundError
from ..inputs import parse_json, read_file
from ..urls import canonical_source_url, parse_url

__all__ = ["Bookmark", "js_slice", "read_library"]

MAX_BYTES = 100 * 1024 * 1024
MAX_BOOKMARKS = 50_000
_ID = re.compile(r"[A-Za-z0-9_-]{1,128}", re.ASCII)
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_DIGITS = re.compile(r"\d+", re.ASCII)


@dataclass(frozen=True)
class Bookmark:
    """One normalized gallery row."""

    id: str
    text: str
    url: str
    summary: str
    media: tuple[dict[str, str], ...] = field(default_factory=tuple)


def js_slice(text: str, units: int) -> str:
    """The first ``units`` UTF-16 code units (a split surrogate pair is dropped whole)."""
    encoded = text.encode("utf-16-le", "surrogatepass")[: units * 2]
    out = encoded.decode("utf-16-le", "surrogatepass")
    if out and "\ud800" <= out[-1] <= "\udbff":
        out = out[:-1]
    return out


def _clean(value: Any, limit: int) -> str:
    return js_slice(_CONTROL.sub("", value), limit) if isinstance(value, str) else ""


def safe_url(value: Any) -> str:
    """An https URL without credentials of at most 4096 characters, else ""."""
    if not isinstance(value, str) or not value or len(value) > 4096:
        return ""
    try:
        url = parse_url(value)
    except InvalidInputError:
        return ""
    if url.protocol != "https:" or url.username or url.password:
        return ""
    return str(url.href)


def _row_id(row: dict[str, Any]) -> str | None:
    for key in ("id_str", "id", "tweet_id"):
        value = row.get(key)
        if isinstance(value, bool):
            continue
        if isinstance(value, int) and abs(value) <= 2**53 - 1:
            value = str(value)
        if isinstance(value, str) and _ID.fullmatch(value):
            return value
    return None


def _text(row: dict[str, Any]) -> str:
    extended = row.get("extended_tweet")
    for value in (
        extended.get("full_text") if isinstance(extended, dict) else None,
        row.get("full_text"),
        row.get("text"),
    ):
        if isinstance(value, str):
            return _clean(value, 20_000)
    return ""


def _media(row: dict[str, Any]) -> tuple[dict[str, str], ...]:
    out = []
    media = row.get("media")
    for item in media if isinstance(media, list) else []:
        if not isinstance(item, dict) or item.get("type") not in ("image", "video"):
            continue
        url = safe_url(item.get("url"))
        if url:
            out.append({"url": url, "type": item["type"], "alt": _clean(item.get("alt"), 1000)})
    return tuple(out[:8])


def normalize_row(row: dict[str, Any]) -> Bookmark | None:
    """One row, or None when it has no usable id."""
    rid = _row_id(row)
    if rid is None:
        return None
    fallback = f"https://x.com/i/web/status/{rid}" if _DIGITS.fullmatch(rid) else ""
    url = canonical_source_url("x", rid, safe_url(row.get("url")) or fallback)
    return Bookmark(rid, _text(row), url, _clean(row.get("summary"), 4000), _media(row))


def read_library(path: Path) -> list[Bookmark]:
    """Read and validate a bookmark library (missing file: an error, unlike the original)."""
    try:
        data = read_file(path, MAX_BYTES, "Store exceeds 100 MiB.")
    except NotFoundError:
        raise NotFoundError(f"No such bookmark file: {path}") from None
    raw = parse_json(data, "Invalid bookmark library JSON.")
    if (
        not isinstance(raw, dict)
        or raw.get("version") != 1
        or not isinstance(raw.get("bookmarks"), list)
    ):
        raise InvalidInputError("Invalid store; existing data was not overwritten.")
    rows = raw["bookmarks"]
    if len(rows) > MAX_BOOKMARKS:
        raise InvalidInputError("Library exceeds the 50,000 bookmark limit.")
    seen: set[str] = set()
    for row in rows:
        if (
            not isinstance(row, dict)
            or not isinstance(row.get("id"), str)
            or not _ID.fullmatch(row["id"])
            or row["id"] in seen
        ):
            raise InvalidInputError(
                "Invalid bookmark or duplicate ID in store; existing data was not overwritten."
            )
        seen.add(row["id"])
    bookmarks = [normalize_row(row) for row in rows]
    ids = [b.id for b in bookmarks if b is not None]
    if len(ids) != len(rows) or len(set(ids)) != len(ids):
        raise InvalidInputError(
            "Invalid or duplicate bookmark IDs in library backup; collection unchanged."
        )
    return [b for b in bookmarks if b is not None]
