"""Access to the JSON Schemas in ``schema/``, the single source of truth for shapes.

The model reads its limits and enums from these files at import (plain ``json``, cheap);
full ``jsonschema`` validation is loaded lazily, for ``doctor``, imports and tests, so
the hot put/get path never pays for it.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from .errors import XbrainError

__all__ = ["inline_schema", "load_schema", "schema_dir", "schema_errors"]

_BASE = "https://xbrain.local/schema/"


def schema_dir() -> Path:
    """The directory holding the schema files (installed copy, else the source tree)."""
    here = Path(__file__).resolve().parent
    installed = here / "_schema"
    return installed if installed.is_dir() else here.parent / "schema"


@cache
def load_schema(name: str) -> dict[str, Any]:
    """One schema by file stem, e.g. ``resource`` → ``resource.schema.json``."""
    try:
        with open(schema_dir() / f"{name}.schema.json", encoding="utf-8") as handle:
            data: dict[str, Any] = json.load(handle)
    except OSError as exc:
        raise XbrainError(f"xbrain is installed without its schema files ({name}).") from exc
    return data


@cache
def _validator(name: str) -> Any:
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource

    resources = []
    for path in sorted(schema_dir().glob("*.schema.json")):
        contents = load_schema(path.name.removesuffix(".schema.json"))
        resources.append((_BASE + path.name, Resource.from_contents(contents)))
    registry: Any = Registry().with_resources(resources)
    if "#" in name:  # "file#def": one definition of a file's $defs
        file, definition = name.split("#", 1)
        root = {"$ref": f"{_BASE}{file}.schema.json#/$defs/{definition}"}
        return Draft202012Validator(root, registry=registry)
    return Draft202012Validator(load_schema(name), registry=registry)


def schema_errors(name: str, instance: Any) -> list[str]:
    """Every violation of schema ``name`` by ``instance``, as readable one-liners.

    ``name`` is a file stem (``resource``) or ``stem#definition`` for one of its ``$defs``.
    """
    errors = []
    for error in sorted(_validator(name).iter_errors(instance), key=lambda e: list(e.path)):
        where = "/".join(str(part) for part in error.path) or "(root)"
        errors.append(f"{where}: {error.message}")
    return errors


# Keywords that only describe a schema; everything else constrains the instance.
_ANNOTATIONS = frozenset(
    {"$schema", "$id", "$comment", "title", "description", "default", "examples"}
)


def inline_schema(name: str) -> dict[str, Any]:
    """Schema ``name`` made self-contained: every ``$ref`` replaced by what it names.

    For consumers that do not resolve references (MCP clients take a tool's schema as
    one document). The result has no ``$ref``, ``$defs`` or nested ``$id``; a reference
    with constraining siblings becomes ``allOf`` so its meaning is kept exactly.
    """
    root = dict(_inline(load_schema(name), name, ()))
    root.pop("$defs", None)
    return root


def _inline(node: Any, doc: str, seen: tuple[str, ...]) -> Any:
    if isinstance(node, list):
        return [_inline(item, doc, seen) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" not in node:
        return {key: _inline(value, doc, seen) for key, value in node.items()}
    target_doc, target = _resolve(node["$ref"], doc)
    if target in seen:
        raise XbrainError(f"Schema reference cycle through {target} cannot be inlined.")
    body = _inline(_pointer(load_schema(target_doc), target), target_doc, (*seen, target))
    body = {k: v for k, v in body.items() if k not in ("$id", "$schema", "$defs")}
    siblings = {k: _inline(v, doc, seen) for k, v in node.items() if k != "$ref"}
    if set(siblings) - _ANNOTATIONS:
        return {**siblings, "allOf": [*siblings.get("allOf", []), body]}
    return {**body, **siblings}


def _resolve(ref: str, doc: str) -> tuple[str, str]:
    """``file.schema.json#/pointer`` or ``#/pointer`` → (schema stem, full reference)."""
    path, _, pointer = ref.partition("#")
    stem = path.removesuffix(".schema.json") if path else doc
    return stem, f"{stem}#{pointer}"


def _pointer(document: dict[str, Any], reference: str) -> Any:
    node: Any = document
    pointer = reference.partition("#")[2]
    for part in filter(None, pointer.split("/")):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node
