"""The ``design`` field: visual evidence about a resource's images, validated strictly.

Validation order and messages follow the original (reference §7.2), so the first failure
an agent sees is the same one. Limits and enums come from ``schema/design.schema.json``.
"""

from __future__ import annotations

from typing import Any

from ..codec import digest
from ..errors import InvalidInputError
from ..schemas import load_schema
from ..text import has_invalid_text, js_trim, utf16_length
from ..timestamps import parse_timestamp
from ..urls import validate_https

__all__ = ["DOMAINS", "KINDS", "carry_design", "normalize_design"]

_SCHEMA = load_schema("design")
_PROPS = _SCHEMA["properties"]
_DEFS = _SCHEMA["$defs"]
STATUSES: tuple[str, ...] = tuple(_PROPS["status"]["enum"])
DOMAINS: tuple[str, ...] = tuple(_PROPS["domains"]["items"]["properties"]["label"]["enum"])
KINDS: tuple[str, ...] = tuple(_PROPS["features"]["items"]["properties"]["kind"]["enum"])
CONFIDENCES: tuple[str, ...] = tuple(_PROPS["styles"]["items"]["properties"]["confidence"]["enum"])
_MAX_IMAGES = _PROPS["images"]["maxItems"]
_MAX_DOMAINS = _PROPS["domains"]["maxItems"]
_MAX_FEATURES = _PROPS["features"]["maxItems"]
_MAX_STYLES = _PROPS["styles"]["maxItems"]
_MAX_FEATURE_IDS = _DEFS["featureIds"]["maxItems"]
_URL_MAX = _DEFS["imageUrl"]["maxLength"]

STALE_REASON = "Source changed; inspect images again."


def _fail(message: str) -> InvalidInputError:
    return InvalidInputError(message)


def _text(value: Any, limit: int) -> str:
    if (
        not isinstance(value, str)
        or utf16_length(value) > limit
        or has_invalid_text(value)
        or not js_trim(value)
    ):
        raise _fail("Invalid design text.")
    return js_trim(value)


def _list(value: Any, limit: int) -> list[dict[str, Any]]:
    if not isinstance(value, list) or len(value) > limit:
        raise _fail("Invalid design list.")
    if not all(isinstance(item, dict) for item in value):
        raise _fail("Invalid design list.")
    return value


def _image_url(value: Any) -> str:
    _text(value, _URL_MAX)
    return validate_https(
        js_trim(value), "Image URLs", "Image URLs must be HTTPS without credentials."
    )


def _feature_ids(value: Any, known: set[str]) -> list[str]:
    error = "Labels require existing visual evidence."
    if not isinstance(value, list) or not 1 <= len(value) <= _MAX_FEATURE_IDS:
        raise _fail(error)
    out: list[str] = []
    for item in value:
        if not isinstance(item, str) or js_trim(item) not in known:
            raise _fail(error)
        if js_trim(item) not in out:
            out.append(js_trim(item))
    return out


def normalize_design(raw: Any) -> dict[str, Any]:
    """Validate a design object and return it in canonical key order."""
    if not isinstance(raw, dict) or raw.get("status") not in STATUSES:
        raise _fail("Invalid design status.")
    status: str = raw["status"]

    images: list[dict[str, Any]] = []
    for image in _list(raw.get("images"), _MAX_IMAGES):
        if not isinstance(image.get("observed"), bool):
            raise _fail("Specify actual image observation.")
        images.append({"url": _image_url(image.get("url")), "observed": image["observed"]})
    if len({image["url"] for image in images}) != len(images):
        raise _fail("Duplicate image URL.")
    observed = {image["url"] for image in images if image["observed"]}

    features: list[dict[str, Any]] = []
    for feature in _list(raw.get("features"), _MAX_FEATURES):
        url = _image_url(feature.get("imageUrl"))
        if feature.get("kind") not in KINDS or url not in observed:
            raise _fail("Features require an observed image and valid dimension.")
        features.append(
            {
                "id": _text(feature.get("id"), 80),
                "kind": feature["kind"],
                "value": _text(feature.get("value"), 200),
                "imageUrl": url,
                "evidence": _text(feature.get("evidence"), 2000),
            }
        )
    known = {feature["id"] for feature in features}
    if len(known) != len(features):
        raise _fail("Duplicate feature ID.")

    domains: list[dict[str, Any]] = []
    for domain in _list(raw.get("domains"), _MAX_DOMAINS):
        if domain.get("label") not in DOMAINS:
            raise _fail("Invalid design domain.")
        domains.append(
            {"label": domain["label"], "featureIds": _feature_ids(domain.get("featureIds"), known)}
        )

    styles: list[dict[str, Any]] = []
    for style in _list(raw.get("styles"), _MAX_STYLES):
        if style.get("confidence") not in CONFIDENCES:
            raise _fail("Invalid style confidence.")
        label = _text(style.get("label"), 200)
        feature_ids = _feature_ids(style.get("featureIds"), known)
        confirmation = style.get("confirmation")
        styles.append(
            {
                "label": label,
                "featureIds": feature_ids,
                "confidence": style["confidence"],
                "confirmation": None if confirmation is None else _text(confirmation, 2000),
            }
        )
    if len({d["label"] for d in domains}) != len(domains) or len(
        {s["label"].lower() for s in styles}
    ) != len(styles):
        raise _fail("Duplicate design label.")

    analyzed_at = raw.get("analyzedAt", ...)
    if analyzed_at is not None:
        try:
            analyzed_at = parse_timestamp(analyzed_at)
        except InvalidInputError:
            raise _fail("Invalid analysis date.") from None

    if status == "analyzed" and (not features or not domains or analyzed_at is None):
        raise _fail("Analysis requires observed features, a domain and date.")
    if status == "unanalyzed" and (
        features or domains or styles or analyzed_at is not None or observed
    ):
        raise _fail("Unanalyzed images cannot carry visual guesses.")

    return {
        "status": status,
        "images": images,
        "domains": domains,
        "features": features,
        "styles": styles,
        "analyzedAt": analyzed_at,
        "reason": _text(raw.get("reason"), 2000),
    }


def carry_design(old: dict[str, Any] | None, new: dict[str, Any]) -> dict[str, Any]:
    """Apply the original's design carry-over from ``old`` to the incoming ``new``.

    A put without a design (or with the same design) keeps the stored one, marked stale
    when the text or source changed, so a plain edit can never erase visual evidence.
    """
    if old is None or "design" not in old:
        return new
    if "design" in new and digest(new["design"]) != digest(old["design"]):
        return new
    changed = old["text"] != new["text"] or digest(old["source"]) != digest(new["source"])
    design = dict(old["design"])
    if changed:
        design["status"] = "stale"
        design["reason"] = STALE_REASON
    return {**new, "design": design}
