"""The project registry: the folders recall has been asked from, each with the project
id it resolved to and when it was last seen (memex's ``project-registry``).

Local and private like telemetry: ``.git/xbrain/projects.json`` (0600), never
committed, listed by ``xbrain config projects``. Recall notes its folder on every prompt
but writes only when the folder is new, resolves to another project, or was last seen
over a minute ago, so a busy session rewrites the file at most once a minute. It never
fails a prompt: a file that cannot be read is started over, one that cannot be written
is left as it was. At most ``MAX_FOLDERS`` folders are kept (the longest unseen go).
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path
from typing import Any

from ..errors import XbrainError
from ..inputs import read_file
from ..timestamps import format_timestamp

__all__ = ["MAX_FOLDERS", "REGISTRY", "listed", "note"]

REGISTRY = Path("xbrain") / "projects.json"
MAX_FOLDERS = 1000
MAX_BYTES = 4 << 20
FRESH_SECONDS = 60
_FORMAT = "xbrain.projects/1"


def _load(control: Path) -> dict[str, dict[str, Any]]:
    """Folder → {project, lastSeen, seen (epoch seconds)}; empty when missing or damaged."""
    try:
        data = json.loads(read_file(control / REGISTRY, MAX_BYTES, "too large", follow=False))
    except (XbrainError, ValueError, OSError):
        return {}
    folders = data.get("folders") if isinstance(data, dict) else None
    if data.get("format") != _FORMAT or not isinstance(folders, dict):
        return {}
    return {
        folder: item
        for folder, item in folders.items()
        if isinstance(item, dict)
        and isinstance(item.get("project"), str)
        and isinstance(item.get("seen"), int | float)
    }


def note(control: Path, folder: str, project: str, now: float | None = None) -> None:
    """Note that recall was asked from ``folder``, which resolved to ``project``."""
    now = time.time() if now is None else now
    with contextlib.suppress(OSError, ValueError, XbrainError):  # never fails a prompt
        folders = _load(control)
        known = folders.get(folder)
        if known and known["project"] == project and 0 <= now - known["seen"] < FRESH_SECONDS:
            return
        folders[folder] = {"project": project, "seen": now}
        if len(folders) > MAX_FOLDERS:
            kept = sorted(folders.items(), key=lambda item: -item[1]["seen"])[:MAX_FOLDERS]
            folders = dict(kept)
        body = {"format": _FORMAT, "folders": folders}
        _write(control / REGISTRY, json.dumps(body, ensure_ascii=False).encode())


def _write(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` (0600, through a temporary file beside it; not
    synced: the registry is local convenience, and one lost is started over)."""
    path.parent.mkdir(mode=0o700, exist_ok=True)
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


def listed(control: Path) -> list[dict[str, Any]]:
    """Every folder recall has seen, the most recent first: ``{folder, project, lastSeen}``."""
    from datetime import datetime, timezone

    rows = []
    for folder, item in _load(control).items():
        try:
            seen = format_timestamp(datetime.fromtimestamp(item["seen"], timezone.utc))
        except (OverflowError, OSError, ValueError):
            continue
        rows.append({"folder": folder, "project": item["project"], "lastSeen": seen})
    rows.sort(key=lambda row: (row["lastSeen"], row["folder"]), reverse=True)
    return rows
