"""Trees from outside are hostile until checked: the gate every incoming commit passes.

A remote (``remote pull``, its merge, ``clone``, ``remote verify``) can hand over any
tree git can encode: ``..`` or ``.git`` entries, symbolic links, submodules, files no
store has, records that do not parse. ``check_commit`` walks what a commit brings
before anything of it is written, refs and working tree included, and refuses the whole
commit at the first problem, naming the path:

* every path component is a plain name (:mod:`xbrain.paths`);
* every entry is a regular, non-executable file (no links, submodules, ``100755``);
* every path has a place in the store's layout (:func:`xbrain.layout.classify`);
* every file is within its size bound, every record parses and sits at its own path,
  and ``xbrain.yaml``, receipts and ingestion state validate against ``schema/``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from . import layout
from .errors import InvalidInputError, XbrainError
from .git import FILE_MODE, CommitId, GitStore
from .model import parse_record
from .paths import component_problem

__all__ = ["MAX_BYTES", "check_commit"]

# Generous bounds per kind of file: a resource is at most ~0.5 MiB serialized, state
# files grow with the number of ids (10,000 by default; limits can be raised).
MAX_BYTES = {
    "marker": 64 * 1024,
    "resource": 2 * 1024 * 1024,
    "tombstone": 4 * 1024,
    "catalog": 64 * 1024 * 1024,
    "urls": 64 * 1024 * 1024,
    "summary": 4 * 1024,
    "receipts": 64 * 1024 * 1024,
    "source": 4 * 1024 * 1024,
    "captures": 64 * 1024 * 1024,
    "pending": 64 * 1024 * 1024,
}
_SCHEMAS = {
    "marker": "store-files#marker",
    "receipts": "store-files#receipts",
    "source": "store-files#source",
    "captures": "store-files#captures",
    "pending": "store-files#pending",
    "catalog": "store-files#catalog",
    "urls": "store-files#urls",
    "summary": "store-files#summary",
}
_MODES = {0o120000: "a symbolic link", 0o160000: "a submodule (gitlink)"}


def _shown(parts: tuple[bytes, ...]) -> str:
    return json.dumps(b"/".join(parts).decode("utf-8", "backslashreplace"))


def _refuse(origin: str, shown: str, why: str) -> InvalidInputError:
    return InvalidInputError(f"Refused {origin}: {shown} is {why}; nothing changed.")


def check_commit(
    git: GitStore,
    base: CommitId | None,
    commit: CommitId,
    origin: str,
    parsed: dict[str, dict[str, Any]] | None = None,
) -> list[str]:
    """Check what ``commit`` brings on top of ``base`` (None: all of it); its paths.

    ``origin`` names where it came from in messages (``remote origin``, a URL).
    Raises InvalidInputError naming the first refused path. ``parsed``, when given,
    receives each record parsed on the way (blob id → record), so the merge that
    follows does not parse it again.
    """
    found: list[tuple[str, str, str]] = []
    for leaf in git.walk_leaves(base, commit):
        shown = _shown(leaf.parts)
        for part in leaf.parts:
            problem = component_problem(part)
            if problem is not None:
                raise _refuse(origin, shown, problem)
        if leaf.mode != FILE_MODE:
            why = _MODES.get(leaf.mode, f"not a regular file (mode {leaf.mode:o})")
            raise _refuse(origin, shown, why)
        path = b"/".join(leaf.parts).decode("utf-8")
        kind = layout.classify(path)
        if kind is None:
            raise _refuse(origin, shown, "not part of an xbrain store's layout")
        found.append((path, leaf.sha, kind))
    snap = git.snapshot(commit)
    for path, sha, kind in sorted(found):
        size = git.blob_size(sha)  # from the header: a huge blob is never inflated
        if size is not None and size > MAX_BYTES[kind]:
            raise _refuse(origin, json.dumps(path), f"larger than {MAX_BYTES[kind]:,} bytes")
        data = snap.blob(sha)
        if len(data) > MAX_BYTES[kind]:
            raise _refuse(origin, json.dumps(path), f"larger than {MAX_BYTES[kind]:,} bytes")
        problem = content_problem(kind, path, data, parsed, sha)
        if problem is not None:
            raise _refuse(origin, json.dumps(path), f"invalid ({problem})")
    if base is None and snap.read(layout.MARKER) is None:
        raise InvalidInputError(f"Refused {origin}: it is not an xbrain store (no xbrain.yaml).")
    return [path for path, _, _ in found]


def content_problem(
    kind: str,
    path: str,
    data: bytes,
    parsed: dict[str, dict[str, Any]] | None = None,
    sha: str = "",
) -> str | None:
    """Why the bytes of a store file of ``kind`` at ``path`` are unacceptable, or None."""
    from .schemas import schema_errors

    try:
        if kind in ("resource", "tombstone"):
            record = parse_record(kind, data)
            if layout.record_path(kind, record["id"]) != path:
                return "the file name does not match its id"
            if parsed is not None:
                parsed[sha] = record
            return None
        value = _parse(kind, data)
    except XbrainError as exc:
        return exc.message.rstrip(".")
    errors = schema_errors(_SCHEMAS[kind], value)
    if errors:
        return errors[0]
    if kind == "marker":
        from .view import StoreConfig

        try:
            StoreConfig.from_marker(data)
        except XbrainError as exc:
            return exc.message.rstrip(".")
    return None


def _parse(kind: str, data: bytes) -> Any:
    """A state file as data (YAML for the marker, JSON otherwise), depth-bounded."""
    try:
        if kind == "marker":
            from .codec import load_yaml

            return load_yaml(data)
        return json.loads(data.decode("utf-8"))
    except RecursionError:
        raise InvalidInputError("nested too deeply") from None
    except Exception as exc:  # every parser failure means the same: not this kind of file
        what = "YAML" if kind == "marker" else "JSON"
        raise InvalidInputError(f"not valid {what}") from exc


def record_ids(paths: list[str]) -> set[str]:
    """The resource ids named by record paths."""
    return {Path(p).stem for p in paths if layout.classify(p) in ("resource", "tombstone")}
