"""``adopt``: validate and commit hand edits of record files in the working tree.

Works on every registered record kind: a file under a kind's directory is parsed by that
kind and committed in its canonical form when valid.
"""

from __future__ import annotations

import os
from typing import Any

from . import kinds  # noqa: F401  (the built-in record kinds register themselves)
from .core import WORKTREE_TEMP, Core, GitStore, read_worktree_file
from .core.registry import RecordKind, classify, record_kinds, record_path
from .errors import ConflictError, InvalidInputError, XbrainError

__all__ = ["adopt"]

_NOT_RECORD = "Not a record file; left alone."


def adopt(core: Core) -> dict[str, Any]:
    """Validate and commit hand edits of record files in the working tree.

    Valid edited or new ``resources/``/``tombstones/`` files are committed in their
    canonical form (one commit); invalid ones, deletions and other files are reported
    and left alone.
    """
    core.existing()
    with core.git() as git:
        elsewhere = git.checked_out()
    if elsewhere is not None:  # its files are that checkout's, not edits of main's
        raise ConflictError(
            f"The store's working tree is checked out at {elsewhere}, not main: its files "
            "are not edits. Run git checkout main, make your edits there, then adopt."
        )
    limit = max(spec.max_bytes for spec in record_kinds())
    adopted: list[dict[str, str]] = []
    rejected: list[dict[str, str]] = []
    with core.transaction("adopt") as txn:
        committed = dict(txn.snap.files())
        git_root = core.path
        candidates = sorted(
            set(_worktree_files(core)) | {p for p in committed if _kind_of(p) is not None}
        )
        for path in candidates:
            # links are never followed; nothing larger than a record is read
            data = read_worktree_file(git_root / path, limit)
            if data is None and os.path.lexists(git_root / path):
                rejected.append(
                    {"path": path, "error": "Not a regular file, or too large; left alone."}
                )
                continue
            if data is not None and GitStore.hash_blob(data) == committed.get(path):
                continue
            spec = _kind_of(path)
            if spec is None:
                rejected.append({"path": path, "error": _not_adopted(path)})
                continue
            if data is None:
                rejected.append(
                    {"path": path, "error": "Deleted by hand; use xbrain delete instead."}
                )
                continue
            try:
                record = spec.parse(data)
                if spec.path(record["id"]) != path:
                    raise InvalidInputError("File name or folder does not match its id.")
            except XbrainError as exc:
                # a stray file among the records (notes.txt) is not a broken record
                named = classify(path) is not None or path.endswith(".yaml")
                rejected.append({"path": path, "error": exc.message if named else _NOT_RECORD})
                continue
            tombstone = txn.read(record_path("tombstone", record["id"]))
            if spec.name == "resource" and tombstone is not None:
                error = "The resource is deleted; restore it with xbrain put."
                rejected.append({"path": path, "error": error})
                continue
            txn.put_record(spec.name, record)
            txn.actions.append(("adopt", record["id"], record.get("title")))
            adopted.append({"path": path, "id": record["id"]})
    return {"adopted": adopted, "rejected": rejected, "commit": txn.commit_id}


def _not_adopted(path: str) -> str:
    """Why a file that is no record is left alone, and what changes it instead."""
    kind = classify(path)
    if kind is None:
        return _NOT_RECORD
    repair = "xbrain doctor --repair restores this file; left alone."
    if kind.startswith("skill"):
        return f"A skill changes through xbrain skill save (a revision never changes); {repair}"
    if kind == "marker":
        return f"Settings change through xbrain config; {repair}"
    return f"xbrain keeps this file itself; {repair}"


def _kind_of(path: str) -> RecordKind | None:
    top = path.split("/", 1)[0]
    return next((spec for spec in record_kinds() if spec.directory == top), None)


def _worktree_files(core: Core) -> list[str]:
    with core.git() as git:
        return [p for p in git.worktree_files() if not p.endswith(WORKTREE_TEMP)]
