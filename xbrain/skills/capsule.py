"""``skill export``: one revision as a deterministic, lossless ZIP "capsule".

Members, sorted by path: ``<slug>/SKILL.md``, the components, and
``<slug>/.xbrain-capsule.json`` (the manifest, states and provenance). Every member has
the same fixed timestamp and mode and is stored uncompressed, so two exports of one
revision are byte-identical, and importing the capsule gives the same canonical hash.
A file the manifest marks executable is stored with mode 0755 (every other: 0644), so
unzip and an import restore the bit.
"""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Any

from ..core import Core
from ..errors import InvalidInputError
from ..kinds import skill as kind
from ..kinds.jsonstore import write_private_file
from .reading import chosen, state_of
from .sources import CAPSULE
from .writing import resolve_revision

__all__ = ["export"]

_EPOCH = (1980, 1, 1, 0, 0, 0)  # the earliest time a ZIP can hold
CAPSULE_FORMAT = "xbrain.skill-capsule/1"


def export(
    core: Core, slug: str, ref: str | None, out: Path, force: bool = False
) -> dict[str, Any]:
    """Write revision ``ref`` (default: the published one, else the head) to ``out``
    (an existing file only when ``force``)."""
    if out.suffix.lower() != ".zip":
        raise InvalidInputError(f"The capsule's file name must end in .zip: {out}")
    out = core.export_target(out, force)
    with core.reading() as view:
        state = state_of(view, slug)
        assert view is not None
        rev = chosen(state)[0]["id"] if ref is None else resolve_revision(state, ref)
        revision = kind.stored_revision(view, slug, rev)
        files = dict(kind.revision_files(view, slug, revision))
    entry = next(e for e in state["revisions"] if e["id"] == rev)
    capsule = {
        "format": CAPSULE_FORMAT,
        "slug": slug,
        "skill_id": state["id"],
        "revision_id": rev,
        "revision_number": entry["number"],
        "parent": revision["parent"],
        "created": revision["created"],
        "state": entry["state"],
        "status": state["status"],
        "source": revision["source"],
        "canonical_hash": revision["canonical_hash"],
        "files": revision["files"],
    }
    files[CAPSULE] = (json.dumps(capsule, ensure_ascii=False, indent=2) + "\n").encode()
    executable = {f"{slug}/{item['path']}" for item in revision["files"] if item.get("executable")}
    data = _zip({f"{slug}/{path}": content for path, content in files.items()}, executable)
    write_private_file(out, data)
    return {
        "slug": slug,
        "revision_id": rev,
        "canonical_hash": revision["canonical_hash"],
        "path": str(out),
        "bytes": len(data),
    }


def _zip(members: dict[str, bytes], executable: set[str]) -> bytes:
    """A stored (uncompressed) ZIP of ``members``, sorted, every one 0644 but those in
    ``executable`` (0755: the bit an unzip restores, and an import reads back)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        for name in sorted(members, key=lambda p: p.encode("utf-8")):
            info = zipfile.ZipInfo(name, _EPOCH)
            info.create_system = 3  # Unix, so the mode below says "regular file"
            info.external_attr = (0o100755 if name in executable else 0o100644) << 16
            archive.writestr(info, members[name])
    return buffer.getvalue()
