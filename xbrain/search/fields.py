"""What the index reads from a resource: each field's text, and the design facets the
``--domain/--feature/--style`` filters look at."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["design_facets", "field_texts", "matches_filters"]


def field_texts(resource: dict[str, Any]) -> tuple[str, ...]:
    """The searchable text of each field, in FIELDS order: what the resource kind declares
    (``kinds.resource.search_fields``); imported on first use, so the fast path never pays."""
    from ..kinds.resource import search_fields

    return search_fields(resource)


def design_facets(resource: dict[str, Any]) -> str | None:
    """What the --domain/--feature/--style filters look at (analyzed designs only)."""
    design = resource.get("design")
    if not design or design.get("status") != "analyzed":
        return None
    return json.dumps(
        {
            "domains": [d["label"] for d in design["domains"]],
            "features": [[f["value"], f["kind"]] for f in design["features"]],
            "styles": [s["label"] for s in design["styles"]],
        },
        ensure_ascii=False,
    )


def matches_filters(
    facets: dict[str, Any], domain: str | None, feature: str | None, style: str | None
) -> bool:
    """The original's ``matchesDesign`` on stored facets."""
    if domain and domain not in facets["domains"]:
        return False
    if feature and not any(
        feature.lower() in value.lower() or feature.lower() in kind.lower()
        for value, kind in facets["features"]
    ):
        return False
    return not style or any(style.lower() in label.lower() for label in facets["styles"])
