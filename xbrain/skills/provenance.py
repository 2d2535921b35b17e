"""A capsule's provenance on ``skill import``: what ``.xbrain-capsule.json`` says of the
revision it was exported from, kept as the new revision's ``source``.

The file comes from outside like the rest of the archive: it is read only up to 64 KiB,
parsed as JSON, checked against ``schema/skill-capsule.schema.json``, and believed only
when it describes the files beside it (the same slug, the same canonical hash). A capsule
that fails any of that is ignored with a warning, and the import goes on as a plain ZIP
(nothing is refused for it: the skill's files were checked on their own). Its states
are reported, never applied: an import lands ``proposed`` (SPEC §12). A capsule of a
capsule keeps the first source, so the record stays one level deep.
"""

from __future__ import annotations

import json
from typing import Any

from ..redact import redact_url

__all__ = ["MAX_CAPSULE_BYTES", "capsule_source"]

MAX_CAPSULE_BYTES = 64 * 1024
_ORIGIN = ("revision_id", "revision_number", "created", "state", "status")


def capsule_source(
    data: bytes, slug: str, content_hash: str, path: str | None
) -> tuple[dict[str, Any] | None, str | None]:
    """``(source, None)`` for a capsule that describes the skill ``slug`` whose files hash
    to ``content_hash``, else ``(None, warning)``. ``path``: the archive's file name."""
    from ..schemas import schema_errors

    if len(data) > MAX_CAPSULE_BYTES:
        return None, _ignored(f"it is {len(data):,} bytes; the limit is 64 KiB")
    try:
        capsule = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None, _ignored("it is not JSON")
    errors = schema_errors("skill-capsule", capsule)
    if errors:
        where = errors[0].split(":", 1)[0][:80]  # not the message: it quotes the value
        return None, _ignored(f"it does not match its schema (at {where})")
    if capsule["slug"] != slug or capsule["canonical_hash"] != content_hash:
        return None, _ignored("it describes other files than the archive holds")
    first = capsule["source"]
    if first["type"] == "capsule":
        first = first["origin"]["source"]
    first = dict(first)
    if "url" in first:
        first["url"] = redact_url(first["url"])
    origin = {key: capsule[key] for key in _ORIGIN}
    source: dict[str, Any] = {"type": "capsule"}
    if path is not None:
        source["path"] = path
    source["origin"] = {**origin, "source": first}
    return source, None


def _ignored(reason: str) -> str:
    return f".xbrain-capsule.json ignored: {reason}; imported as a plain ZIP."
