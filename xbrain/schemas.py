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

__all__ = ["load_schema", "schema_dir", "schema_errors"]

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
    return Draft202012Validator(load_schema(name), registry=registry)


def schema_errors(name: str, instance: Any) -> list[str]:
    """Every violation of schema ``name`` by ``instance``, as readable one-liners."""
    errors = []
    for error in sorted(_validator(name).iter_errors(instance), key=lambda e: list(e.path)):
        where = "/".join(str(part) for part in error.path) or "(root)"
        errors.append(f"{where}: {error.message}")
    return errors
