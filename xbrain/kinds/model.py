"""Resources and tombstones: validation, normalization, ids and revision digests.

``normalize_resource`` is the single gate every resource passes through — on put, on
every read from disk and on import — so stored data is always re-normalized exactly as
the original did (reference §1–2). Limits come from ``schema/resource.schema.json``.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple, NewType

from ..codec import canonical_json, digest, sha256_hex
from ..errors import InvalidInputError
from ..schemas import load_schema
from ..text import has_invalid_text, js_trim, utf16_length
from ..timestamps import parse_timestamp
from ..urls import source_url
from .design import normalize_design

__all__ = [
    "ID_PATTERN",
    "Normalized",
    "Resource",
    "ResourceId",
    "normalize_resource",
    "normalize_tombstone",
    "parse_record",
    "resource_id",
    "revision",
]

ResourceId = NewType("ResourceId", str)
Resource = dict[str, Any]

ID_PATTERN = re.compile(r"resource_[a-f0-9]{64}", re.ASCII)
_PROVIDER = re.compile(r"[a-z0-9][a-z0-9_-]*", re.ASCII)

_PROPS = load_schema("resource")["properties"]
_SOURCE = _PROPS["source"]["properties"]
_NOTES = load_schema("resource")["$defs"]["notes"]
TEXT_FIELDS: tuple[tuple[str, int], ...] = tuple(
    (name, _PROPS[name]["maxLength"]) for name in ("title", "text", "summary", "purpose")
)
KNOWN_FIELDS = frozenset(_PROPS)


def resource_id(provider: str, source_id: str) -> ResourceId:
    """``"resource_" + sha256(JSON.stringify([provider, sourceId]))``."""
    return ResourceId("resource_" + sha256_hex(canonical_json([provider, source_id]).encode()))


def revision(record: dict[str, Any]) -> str:
    """The revision digest of a normalized resource or tombstone."""
    return digest(record)


def _string(value: Any, name: str, limit: int) -> str:
    if not isinstance(value, str) or utf16_length(value) > limit:
        raise InvalidInputError(f"Invalid {name}; expected a string of at most {limit} characters.")
    if has_invalid_text(value):
        raise InvalidInputError(
            f"Invalid {name}; text must not contain NUL or unpaired surrogates."
        )
    return value


def _notes(value: Any, name: str) -> list[str]:
    if not isinstance(value, list) or len(value) > _NOTES["maxItems"]:
        raise InvalidInputError(f"Invalid {name}.")
    limit = _NOTES["items"]["maxLength"]
    out: list[str] = []
    for item in value:
        text = js_trim(_string(item, name, limit))
        if text and text not in out:
            out.append(text)
    return out


class Normalized(NamedTuple):
    """A normalized resource plus the names of the input fields that were dropped."""

    resource: Resource
    dropped: tuple[str, ...]


_REQUIRED = ("title", "text", "summary", "purpose", "useWhen", "limitations", "savedReason")


def _fold(name: str) -> str:
    return "".join(c for c in name.casefold() if c.isalnum())


def _missing(fields: dict[str, Any], names: tuple[str, ...], prefix: str = "") -> None:
    """A field that is absent is named as missing, with a look-alike the input has."""
    for name in names:
        if name in fields:
            continue
        alike = [key for key in fields if isinstance(key, str) and _fold(key) == _fold(name)]
        hint = f" (unknown field {alike[0]} — did you mean {name}?)" if alike else ""
        raise InvalidInputError(f"Missing {prefix}{name}; every resource needs it.{hint}")


def normalize_resource(raw: Any) -> Normalized:
    """Validate one resource in the original's order; the first failure wins.

    An absent field is reported as missing (naming a look-alike key such as
    ``usewhen``); a present but invalid one keeps the original's message.
    """
    if isinstance(raw, dict):
        _missing(raw, ("source",))
    if not isinstance(raw, dict) or not isinstance(raw.get("source"), dict):
        raise InvalidInputError("Invalid resource/source.")
    source = raw["source"]
    _missing(source, ("provider", "id", "url"), "source.")
    _missing(raw, (*_REQUIRED, "updatedAt"))
    provider = _string(source.get("provider"), "source.provider", _SOURCE["provider"]["maxLength"])
    sid = _string(source.get("id"), "source.id", _SOURCE["id"]["maxLength"])
    provider, sid = js_trim(provider).lower(), js_trim(sid)
    if not _PROVIDER.fullmatch(provider) or not sid:
        raise InvalidInputError("A stable source provider and source ID are required.")
    url = _string(source.get("url"), "source.url", _SOURCE["url"]["maxLength"])
    url = source_url(provider, sid, js_trim(url))
    rid = resource_id(provider, sid)
    if "id" in raw and raw["id"] != rid:
        raise InvalidInputError("Resource ID does not match its source.")

    out: Resource = {"id": rid, "source": {"provider": provider, "id": sid, "url": url}}
    for name, limit in TEXT_FIELDS:
        out[name] = js_trim(_string(raw.get(name), name, limit))
    out["useWhen"] = _notes(raw.get("useWhen"), "useWhen")
    out["limitations"] = _notes(raw.get("limitations"), "limitations")
    limit = _PROPS["savedReason"]["maxLength"]
    reason = raw.get("savedReason")
    if "savedReason" not in raw or reason is not None:
        reason = js_trim(_string(reason, "savedReason", limit))
    out["savedReason"] = reason
    out["updatedAt"] = parse_timestamp(raw.get("updatedAt"), "updatedAt")
    if "design" in raw:
        out["design"] = normalize_design(raw["design"])
    dropped = sorted(set(raw) - KNOWN_FIELDS) + sorted(
        f"source.{key}" for key in set(source) - set(_SOURCE)
    )
    return Normalized(out, tuple(dropped))


def normalize_tombstone(raw: Any) -> dict[str, str]:
    """Validate a stored tombstone ``{id, deletedAt}``."""
    if not isinstance(raw, dict) or not isinstance(raw.get("id"), str):
        raise InvalidInputError("Invalid or duplicate tombstone.")
    if not ID_PATTERN.fullmatch(raw["id"]):
        raise InvalidInputError("Invalid or duplicate tombstone.")
    return {"id": raw["id"], "deletedAt": parse_timestamp(raw.get("deletedAt"), "deletedAt")}


def parse_record(kind: str, data: bytes) -> dict[str, Any]:
    """A stored record file (``resource`` or ``tombstone``), parsed and re-normalized.

    Invalid content raises InvalidInputError — unreadable YAML as ``Not valid YAML.``
    """
    from ..codec import load_yaml

    try:
        raw = load_yaml(data)
    except Exception as exc:  # ruamel raises many kinds; all mean the same here
        raise InvalidInputError("Not valid YAML.") from exc
    return normalize_resource(raw).resource if kind == "resource" else normalize_tombstone(raw)
