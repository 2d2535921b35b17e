"""``entry export DIR``: entries as memex-style ``rules/``, ``memory/`` and ``skills/``
folders of Markdown (and skills as ``skills/<name>/``), which ``entry import``
(:mod:`.importing`) reads back losslessly.

Export writes into a new or empty directory (it never overwrites a file): each entry
goes back to the file it came from — byte for byte when it has not changed since, a
memory file's sections in their order — and an entry without a source file, or whose
file another entry already went back to (two imports of one file name), rendered to a
free ``<folder>/<name>.md``: no entry is ever written over another.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from ..core import Core, bulk
from ..errors import InvalidInputError
from ..kinds import entry as kind
from ..kinds.entryformat import (
    FOLDERS,
    file_stem,
    parse_markdown,
    render_file,
    render_section,
    unchanged_since_import,
)
from ..kinds.jsonstore import write_private_file
from ..paths import same_file_key
from .skillfolders import skill_files

__all__ = ["export_dir"]

_FOLDER_OF = {kind_name: folder for folder, kind_name in FOLDERS.items()}


def export_dir(core: Core, root: Path) -> dict[str, Any]:
    """Write every entry under ``root`` (new or empty, outside the store) as memex-style
    Markdown."""
    root = core.export_target(root, folder=True)
    if root.exists() and any(root.iterdir()):
        raise InvalidInputError(f"Export into a new or empty directory: {root}")
    with core.reading() as view:
        entries: list[dict[str, Any]] = []
        skills: dict[str, bytes] = {}
        executable: set[str] = set()
        if view is not None:
            with core.git() as git:
                entries = list(bulk.records(git, view, "entry"))
            skills, executable = skill_files(view)
    texts = _files(entries, set(skills))
    files = {**skills, **{rel: text.encode("utf-8") for rel, text in texts.items()}}
    new_root = not root.exists()
    try:
        for rel, data in sorted(files.items()):
            write_private_file(root / rel, data)
            if rel in executable:  # a script marked so where it came from: 0700, still private
                (root / rel).chmod(0o700)
    except BaseException:  # a full disk, a name the file system refuses: leave it as it was
        _remove_written(root, sorted(files), new_root)
        raise
    count = len({rel.split("/", 2)[1] for rel in skills})
    return {"exported": len(entries), "skills": count, "files": len(files), "directory": str(root)}


def _remove_written(root: Path, written: list[str], new_root: bool) -> None:
    """Undo a failed export into ``root`` (new, or empty before it): the files, the
    folders that held them, and ``root`` itself when the export made it."""
    folders = {parent for rel in written for parent in (root / rel).parents if parent != root}
    for rel in written:
        (root / rel).unlink(missing_ok=True)
    for folder in sorted(folders, key=lambda path: len(path.parts), reverse=True):
        if folder.is_relative_to(root):
            with contextlib.suppress(OSError):  # not empty: not only ours
                folder.rmdir()
    if new_root:
        with contextlib.suppress(OSError):
            root.rmdir()


def _files(entries: list[dict[str, Any]], reserved: set[str]) -> dict[str, str]:
    """Path → text of every file the export writes: first the files that go back where
    they came from (whole, or a memory file's sections in order), then the rendered ones
    at a free path (never over another).

    Two entries never share a file unless they are sections of one: an entry whose file
    another entry already went back to (two imports of ``rules/x.md`` from different
    folders, a section whose place another holds, a path that differs only in letter
    case or Unicode form) is rendered to a free path instead, so every entry is in the
    export and imports back. ``reserved``: the paths of the skills' files, taken first.
    """
    claims = {same_file_key(path): path for path in reserved}  # same_file_key → its path
    groups: dict[str, dict[int, str]] = {}  # a memory file's path → order → section text
    used: dict[str, set[int]] = {}  # a memory file's path → the section places taken
    files: dict[str, str] = {}
    rendered: list[tuple[str, dict[str, Any]]] = []

    def free(path: str, order: int | None) -> bool:
        """Whether ``path`` (section ``order`` of it, or None: all of it) is still free."""
        if claims.get(same_file_key(path), path) != path or path in files:
            return False
        return path not in used if order is None else order not in used.get(path, set())

    for entry in entries:
        source = entry.get("source")
        kept = source is not None and _unchanged(entry, source)
        if source is not None and source["section"] is not None and entry["kind"] == "memory":
            path, order = source["path"], source["order"]
            if free(path, order):
                claims[same_file_key(path)] = path
                used.setdefault(path, set()).add(order)
                sections = groups.setdefault(path, {})
                if not kept and order == 0:  # the file's text before its first section
                    head = source["markdown"]
                    start = 0 if head.startswith("## ") else head.find("\n## ") + 1
                    if start > 0:
                        sections[-1] = head[:start]
                if kept or _fits_a_section(entry):
                    sections[order] = source["markdown"] if kept else render_section(entry)
                    continue
        elif kept and source is not None and free(source["path"], None):
            claims[same_file_key(source["path"])] = source["path"]
            files[source["path"]] = source["markdown"]
            continue
        rendered.append((source["path"] if source is not None else _new_path(entry), entry))
    for path, sections in groups.items():
        if all(order < 0 for order in sections):
            continue  # only the text before the sections is left: no entry holds it
        files[path] = "".join(text for _, text in sorted(sections.items()))
    taken = {same_file_key(path) for path in [*files, *reserved]}
    for path, entry in sorted(rendered, key=lambda item: (item[0], item[1]["id"])):
        path = _free(path, taken)
        taken.add(same_file_key(path))
        files[path] = render_file(entry)
    return files


def _unchanged(entry: dict[str, Any], source: dict[str, Any]) -> bool:
    default = FOLDERS.get(source["path"].split("/", 1)[0], "rule")
    for raw in parse_markdown(source["markdown"], source["path"], default):
        if raw["source"]["section"] == source["section"]:
            try:  # the file as it is (no scope written: global) must say the same
                again, _ = kind.normalize_entry(raw, entry["updatedAt"])
            except InvalidInputError:
                return False
            return unchanged_since_import(entry, again)
    return False


def _fits_a_section(entry: dict[str, Any]) -> bool:
    """A memory entry whose only content is its name and body (a section can say that)."""
    plain, _ = kind.normalize_entry(
        {"kind": "memory", "name": entry["name"], "body": entry["body"]}, entry["updatedAt"]
    )
    return unchanged_since_import(entry, plain)


def _new_path(entry: dict[str, Any]) -> str:
    return f"{_FOLDER_OF.get(entry['kind'], 'rules')}/{file_stem(entry)}.md"


def _free(path: str, taken: set[str]) -> str:
    """``path``, or a numbered sibling when another entry already took it (``taken``: the
    paths' ``same_file_key``, as a file system that ignores letter case and Unicode
    normal form would have ``A.md`` replace ``a.md``)."""
    stem, n = path.removesuffix(".md"), 2
    while same_file_key(path) in taken:
        path, n = f"{stem}-{n}.md", n + 1
    return path
