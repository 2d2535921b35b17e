"""The resource kind: distilled notes about a source, one YAML file per id.

``resources/<aa>/<id>.yaml``; a resource and its tombstone share an id and never
coexist. The catalog line carries ``updatedAt``; the URL index follows the live
resources; search indexes the fields below (design labels, title, purpose, useWhen,
summary, text).
"""

from __future__ import annotations

from typing import Any, cast

from ..codec import dump_yaml
from ..core.registry import RecordKind, register
from ..core.view import Transaction, View
from .model import Resource, parse_record
from .urls import StagedUrls, UrlIndex

__all__ = ["DIRECTORY", "KIND", "get", "put", "remove", "same_url", "search_fields"]

DIRECTORY = "resources"


def _parse(data: bytes) -> dict[str, Any]:
    return parse_record("resource", data)


def search_fields(resource: dict[str, Any]) -> tuple[str, ...]:
    """The searchable text of each field, in the search index's field order."""
    design = resource.get("design")
    labels = ""
    if design and design.get("status") == "analyzed":
        labels = " ".join(
            [f["value"] for f in design["features"]]
            + [s["label"] for s in design["styles"]]
            + [d["label"] for d in design["domains"]]
        )
    return (
        labels,
        resource["title"],
        resource["purpose"],
        " ".join(resource["useWhen"]),
        resource["summary"],
        resource["text"],
    )


URLS = UrlIndex(DIRECTORY, _parse)
KIND = RecordKind(
    name="resource",
    directory=DIRECTORY,
    id_prefix="resource_",
    max_bytes=2 << 20,  # a resource is at most ~0.5 MiB serialized
    parse=_parse,
    serialize=dump_yaml,
    catalog_fields=lambda record: {"updatedAt": record["updatedAt"]},
    summary_key="resources",
    schema="resource",
    always_counted=True,
    siblings=("tombstone",),
    derived=(URLS,),
    search_fields=search_fields,
    limited=True,
    original=True,
)
register(KIND)


def path(rid: str) -> str:
    """``resources/<aa>/<id>.yaml``."""
    return KIND.path(rid)


def is_id(rid: object) -> bool:
    """True for ``resource_`` and 64 hex digits."""
    return KIND.is_id(rid)


def get(view: View, rid: str) -> Resource | None:
    """A live resource, re-normalized, or None."""
    return view.record("resource", rid)


def put(txn: Transaction, resource: Resource, *, parsed: bool = False) -> None:
    """Stage a live resource, replacing any tombstone of the same id (``parsed``: it is
    what ``normalize_resource`` returned, as reading it back gives it)."""
    txn.put_record("resource", resource, parsed=parsed)


def remove(txn: Transaction, rid: str) -> None:
    """Stage the removal of a live resource without a tombstone (provider-side delete)."""
    txn.remove_record("resource", rid)


def same_url(txn: Transaction, rid: str, url: str) -> list[str]:
    """Other live resources whose canonical URL is ``url``'s (staged changes included)."""
    return cast(StagedUrls, txn.derived(URLS)).same(rid, url)
