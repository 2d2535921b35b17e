"""The checks of what ``main`` holds: every record, every path, the derived files.

Each record kind in the registry is parsed, schema-checked and compared with its
canonical bytes; every path must have a place in the layout; the catalog, summary and
each kind's derived files must equal what the records imply.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .. import kinds  # noqa: F401  (the built-in record kinds register themselves)
from ..codec import dump_yaml
from ..core import FILE_MODE, CommitId, GitStore, View, layout
from ..core.derive import catalog_entry, derived_files
from ..core.registry import classify, content_problem, record_kinds
from ..errors import XbrainError
from ..paths import component_problem
from ..schemas import schema_errors

__all__ = ["check_catalog", "check_records", "check_tree", "problem"]


def problem(code: str, message: str, path: str | None = None) -> dict[str, Any]:
    """One reported problem (or repair)."""
    out: dict[str, Any] = {"code": code, "message": message}
    if path is not None:
        out["path"] = path
    return out


def check_records(
    view: View, problems: list[dict[str, Any]], live: dict[str, dict[str, Any]] | None = None
) -> dict[str, dict[str, Any]]:
    """Validate each record file of every kind; return the catalog the records imply.

    ``live`` receives kind → id → record for the kinds that feed derived files.
    """
    catalog: dict[str, dict[str, Any]] = {}
    for spec in record_kinds():
        kind = spec.name
        for path, blob in view.snap.files(spec.directory):
            rid = Path(path).stem
            if not path.endswith(".yaml") or spec.path(rid) != path:
                problems.append(problem("misplaced_record", "Unexpected file in records.", path))
                continue
            data = view.snap.blob(blob)
            try:
                record = spec.parse(data)
            except XbrainError as exc:
                problems.append(problem("invalid_record", f"{exc} {_way_back(kind, rid)}", path))
                continue
            if record["id"] != rid:
                problems.append(problem("misplaced_record", "File name differs from id.", path))
                continue
            for error in schema_errors(spec.schema, record) if spec.schema else ():
                problems.append(problem("schema", error, path))
            if dump_yaml(record) != data:
                problems.append(
                    problem("not_normalized", "Stored form differs from the normalized one.", path)
                )
            if rid in catalog:
                problems.append(problem("duplicate_id", "Id is both live and deleted.", path))
            catalog[rid] = catalog_entry(spec, record)
            if spec.derived and live is not None:
                live.setdefault(kind, {})[rid] = record
    return catalog


def check_tree(git: GitStore, head: CommitId | None, problems: list[dict[str, Any]]) -> None:
    """Paths of ``main`` that have no place in a store, and state files that do not validate.

    A store only gets such paths from a commit made outside xbrain; they are reported,
    never written to the working tree.
    """
    if head is None:
        return
    for leaf in git.walk_leaves(None, head):
        path = b"/".join(leaf.parts).decode("utf-8", "backslashreplace")
        unsafe = next(filter(None, (component_problem(p) for p in leaf.parts)), None)
        kind = None if unsafe else classify(path)
        if unsafe or leaf.mode != FILE_MODE or kind is None:
            why = unsafe or (
                "not a regular file" if leaf.mode != FILE_MODE else "not in the layout"
            )
            problems.append(problem("unsafe_path", f"Not a store file ({why}).", path))
        elif kind not in {spec.name for spec in record_kinds()}:
            found = content_problem(kind, path, git.snapshot(head).blob(leaf.sha))
            if found is None or (kind == "marker" and _unreadable_config(problems)):
                continue
            if kind == "marker":  # the store reads it, but a clone would refuse it
                found = (
                    f"{found}: a clone or pull of this store would refuse it; set the value "
                    "again with xbrain config"
                )
            problems.append(problem("invalid_state", found, path))


def _unreadable_config(problems: list[dict[str, Any]]) -> bool:
    """Whether doctor already said the marker cannot be read (said once is enough)."""
    return any(p["code"] == "invalid_config" for p in problems)


def check_catalog(
    view: View,
    expected: dict[str, dict[str, Any]],
    problems: list[dict[str, Any]],
    live: dict[str, dict[str, Any]],
) -> dict[str, bytes | None]:
    """Compare the committed derived files with the records; return the files that fix them."""
    fixes: dict[str, bytes | None] = {}
    want: dict[str, bytes | None] = dict(derived_files(expected, live))
    want_summary = want.pop(layout.SUMMARY)
    present = {path for path, _ in view.snap.files(layout.CATALOG_DIR)}
    labels = {layout.CATALOG_DIR: "Catalog shard"}
    for index in (d for spec in record_kinds() for d in spec.derived):
        labels[index.directory] = index.label
        found = [path for path, _ in view.snap.files(index.directory)]
        present |= set(found)
        if not found:  # a store from before this index existed: its next write builds it
            want = {p: d for p, d in want.items() if not p.startswith(index.directory + "/")}
    for path in sorted(present | set(want)):
        if view.read(path) != want.get(path):
            what = next(v for k, v in labels.items() if path.startswith(k + "/"))
            problems.append(problem("catalog_drift", f"{what} disagrees with records.", path))
            fixes[path] = want.get(path)
    empty = not expected and view.read(layout.SUMMARY) is None  # a new store
    if not empty and view.read(layout.SUMMARY) != want_summary:
        problems.append(problem("catalog_drift", "Summary disagrees with records.", layout.SUMMARY))
        fixes[layout.SUMMARY] = want_summary
    return fixes


def _way_back(kind: str, rid: str) -> str:
    """How to put a damaged record right."""
    if kind == "resource":
        return f"Put back a good version: xbrain restore {rid} --at REV (xbrain log {rid})."
    return "Put the file right in the working tree, then xbrain adopt (git log -p shows it)."
