"""The design field: validation order, messages and carry-over."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from tests.conftest import EXAMPLES
from xbrain.errors import InvalidInputError
from xbrain.kinds.design import carry_design, normalize_design

IMG = "https://pbs.example.com/fictional-card.png"


def analyzed() -> dict[str, Any]:
    batch = json.loads((EXAMPLES / "batch.json").read_text())
    return copy.deepcopy(batch[1]["design"])


def error_of(design: Any) -> str:
    with pytest.raises(InvalidInputError) as info:
        normalize_design(design)
    return info.value.message


def test_valid_design_keeps_canonical_order() -> None:
    raw = analyzed()
    raw = {key: raw[key] for key in reversed(list(raw))}
    out = normalize_design(raw)
    assert list(out) == [
        "status",
        "images",
        "domains",
        "features",
        "styles",
        "analyzedAt",
        "reason",
    ]
    assert out["analyzedAt"] == "2026-10-08T12:30:00.000Z"


def mutate(**changes: Any) -> dict[str, Any]:
    raw = analyzed()
    raw.update(changes)
    return raw


@pytest.mark.parametrize(
    ("design", "message"),
    [
        (None, "Invalid design status."),
        (mutate(status="done"), "Invalid design status."),
        (mutate(images="x"), "Invalid design list."),
        (mutate(images=[{"url": IMG, "observed": True}] * 13), "Invalid design list."),
        (mutate(images=[{"url": IMG, "observed": "yes"}]), "Specify actual image observation."),
        (mutate(images=[{"url": " ", "observed": True}]), "Invalid design text."),
        (mutate(images=[{"url": "no url", "observed": True}]), "Invalid URL"),
        (
            mutate(images=[{"url": "http://a.example/", "observed": True}]),
            "Image URLs must be HTTPS without credentials.",
        ),
        (
            mutate(images=[{"url": IMG, "observed": True}, {"url": IMG, "observed": False}]),
            "Duplicate image URL.",
        ),
        (
            mutate(features=[{**analyzed()["features"][0], "kind": "mood"}]),
            "Features require an observed image and valid dimension.",
        ),
        (
            mutate(images=[{"url": IMG, "observed": False}]),
            "Features require an observed image and valid dimension.",
        ),
        (
            mutate(features=[{**analyzed()["features"][0], "value": "v" * 201}]),
            "Invalid design text.",
        ),
        (mutate(features=[analyzed()["features"][0]] * 2), "Duplicate feature ID."),
        (mutate(domains=[{"label": "food", "featureIds": ["f1"]}]), "Invalid design domain."),
        (
            mutate(domains=[{"label": "web-ui", "featureIds": ["nope"]}]),
            "Labels require existing visual evidence.",
        ),
        (
            mutate(domains=[{"label": "web-ui", "featureIds": []}]),
            "Labels require existing visual evidence.",
        ),
        (
            mutate(styles=[{**analyzed()["styles"][0], "confidence": "sure"}]),
            "Invalid style confidence.",
        ),
        (
            mutate(
                styles=[analyzed()["styles"][0], {**analyzed()["styles"][0], "label": "MINIMAL"}]
            ),
            "Duplicate design label.",
        ),
        (mutate(analyzedAt="yesterday"), "Invalid analysis date."),
        ({k: v for k, v in analyzed().items() if k != "analyzedAt"}, "Invalid analysis date."),
        (mutate(analyzedAt=None), "Analysis requires observed features, a domain and date."),
        (mutate(status="unanalyzed"), "Unanalyzed images cannot carry visual guesses."),
        (mutate(reason=" "), "Invalid design text."),
    ],
)
def test_design_errors(design: Any, message: str) -> None:
    assert error_of(design) == message


def test_unanalyzed_design() -> None:
    raw = {
        "status": "unanalyzed",
        "images": [{"url": IMG, "observed": False}],
        "domains": [],
        "features": [],
        "styles": [],
        "analyzedAt": None,
        "reason": "Captured source images have not been visually inspected.",
    }
    assert normalize_design(raw)["images"] == [{"url": IMG, "observed": False}]


def test_carry_over_marks_stale_on_text_change() -> None:
    design = normalize_design(analyzed())
    old = {"text": "a", "source": {"provider": "web"}, "design": design}
    same = carry_design(old, {"text": "a", "source": {"provider": "web"}})
    assert same["design"] == design
    changed = carry_design(old, {"text": "b", "source": {"provider": "web"}})
    assert changed["design"]["status"] == "stale"
    assert changed["design"]["reason"] == "Source changed; inspect images again."
    assert changed["design"]["features"] == design["features"]
    other = {**design, "reason": "Different analysis"}
    replaced = carry_design(old, {"text": "b", "source": {"provider": "web"}, "design": other})
    assert replaced["design"] == other
