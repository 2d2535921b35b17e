"""``adopt``: validate and commit hand edits of record files in the working tree.

Works on every registered record kind: a file under a kind's directory is parsed by that
kind and committed in its canonical form when valid.
"""

from __future__ import annotations

import os
from typing import Any

from . import kinds  # noqa: F401  (the built-in record kinds register themselves)
from .core import WORKTREE_TEMP, Core, GitStore, read_worktree_file
from .core.registry import RecordKind, record_kinds, record_path
from .errors import ConflictError, InvalidInputError, XbrainError

__all__ = ["adopt"]


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
                rejected.append({"path": path, "error": "Not a record file; left alone."})
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
                deleted = txn.read(record_path("tombstone", record["id"]))
                if spec.name == "resource" and deleted is not None:
                    raise InvalidInputError("The resource is deleted; restore it with xbrain put.")
            except XbrainError as exc:
                rejected.append({"path": path, "error": exc.message})
                continue
            txn.put_record(spec.name, record)
            txn.actions.append(("adopt", record["id"], record.get("title")))
            adopted.append({"path": path, "id": record["id"]})
    return {"adopted": adopted, "rejected": rejected, "commit": txn.commit_id}


def _kind_of(path: str) -> RecordKind | None:
    top = path.split("/", 1)[0]
    return next((spec for spec in record_kinds() if spec.directory == top), None)


def _worktree_files(core: Core) -> list[str]:
    with core.git() as git:
        return [p for p in git.worktree_files() if not p.endswith(WORKTREE_TEMP)]
