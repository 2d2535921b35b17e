"""``entry import DIR``: a memex-style folder — ``rules/``, ``memory/``, ``skills/`` — read
into entries (and the skill folders it holds, which the facade saves as skills).

The walk follows no link (a link or other non-regular file is refused), bounds every
read and reads nothing outside the three folders. In ``skills/``, a folder with a
``SKILL.md`` is a skill — memex's ``skills/<name>/SKILL.md`` — and everything in it is
that skill's (its ``references/``, ``templates/``, ``scripts/`` are components, never
entries); a Markdown file directly in ``skills/`` is a ``workflow`` entry; a folder with
no ``SKILL.md`` is passed over and reported.

An entry imported from a folder remembers its file (``source.path``) and which folder
(``source.folder``: 16 hex of the SHA-256 of the folder's real path — no path is
stored). Entries of the import's scope that came from this folder and that it no longer
holds (the file or the section is gone) are listed as ``missing``; with ``prune`` they
are deleted (tombstones) in the same commit. Entries from other folders are never
touched; of those imported before folders were remembered, only the ones that an older
import made of a skill folder's files (``skills/<name>/…``) count as this folder's.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any, NamedTuple

from ..codec import sha256_hex
from ..core import Core, bulk
from ..errors import InvalidInputError, NotFoundError
from ..kinds import entry as kind
from ..kinds.entryformat import FOLDERS, parse_markdown
from ..timestamps import later_of
from . import apply, prepare

__all__ = ["Folder", "import_dir", "read_folder"]

MAX_FILE = 256 * 1024
MAX_FILES = 5000
MAX_SKILLS = 500
SKILL_MD = "SKILL.md"


class Folder(NamedTuple):
    """What a memex folder holds: its identity, raw entries, skill folders, the Markdown
    files read (relative paths) and the folders passed over."""

    key: str
    raws: list[dict[str, Any]]
    skills: list[Path]
    files: set[str]
    passed: list[str]


def read_folder(root: Path) -> Folder:
    """The entries and skill folders under ``root``'s ``rules/``, ``memory/``, ``skills/``."""
    if not root.is_dir():
        if root.exists():  # a file, a device: there, but not a folder to import
            raise InvalidInputError(f"Not a directory: {root}")
        raise NotFoundError(f"No such directory: {root}")
    found = Folder(
        sha256_hex(os.path.realpath(root).encode("utf-8", "surrogateescape"))[:16],
        [],
        [],
        set(),
        [],
    )
    for folder, default in FOLDERS.items():
        top = root / folder
        if top.is_symlink():
            raise InvalidInputError(f"{folder}/ is a symbolic link.")
        if not top.is_dir():
            continue
        walked = _skills(top, found) if folder == "skills" else _walk(top, folder)
        for path, rel in walked:
            if len(found.files) >= MAX_FILES:
                raise InvalidInputError(f"The folder holds more than {MAX_FILES:,} Markdown files.")
            found.files.add(rel)
            for raw in parse_markdown(_read_text(path, rel), rel, default):
                raw["source"]["folder"] = found.key
                found.raws.append(raw)
    if not found.raws and not found.skills:
        raise InvalidInputError(f"No entries in {root} (looked in rules/, memory/, skills/).")
    return found


def _kind_of(item: os.DirEntry[str], rel: str) -> int:
    mode = item.stat(follow_symlinks=False).st_mode
    if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
        what = "a symbolic link" if stat.S_ISLNK(mode) else "not a regular file"
        raise InvalidInputError(f"{rel!a} is {what}.")
    return mode


def _skills(top: Path, found: Folder) -> list[tuple[Path, str]]:
    """The Markdown files directly in ``skills/`` (workflow entries); each folder with a
    ``SKILL.md`` goes to ``found.skills``, any other folder to ``found.passed``."""
    out: list[tuple[Path, str]] = []
    with os.scandir(top) as items:
        for item in sorted(items, key=lambda e: e.name):
            rel = f"skills/{item.name}"
            if stat.S_ISDIR(_kind_of(item, rel)):
                marker = Path(item.path) / SKILL_MD
                if marker.is_file() and not marker.is_symlink():
                    if len(found.skills) >= MAX_SKILLS:
                        raise InvalidInputError(f"skills/ holds more than {MAX_SKILLS} skills.")
                    found.skills.append(Path(item.path))
                else:
                    found.passed.append(rel + "/")
            elif item.name.endswith(".md"):
                out.append((Path(item.path), rel))
    return out


def _walk(directory: Path, rel: str) -> list[tuple[Path, str]]:
    out: list[tuple[Path, str]] = []
    with os.scandir(directory) as items:
        for item in sorted(items, key=lambda e: e.name):
            path = f"{rel}/{item.name}"
            if stat.S_ISDIR(_kind_of(item, path)):
                if path.count("/") > 8:
                    raise InvalidInputError(f"{path!a} is nested too deeply.")
                out.extend(_walk(Path(item.path), path))
            elif item.name.endswith(".md"):
                out.append((Path(item.path), path))
    return out


def _read_text(path: Path, rel: str) -> str:
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(MAX_FILE + 1)
    if len(data) > MAX_FILE:
        raise InvalidInputError(f"{rel!a} is over {MAX_FILE // 1024} KiB.")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInputError(f"{rel!a} is not UTF-8 text.") from None


def import_dir(
    core: Core, folder: Folder, scope: str | None = None, *, prune: bool = False
) -> dict[str, Any]:
    """The folder's entries as one commit (deleted entries are not brought back), and the
    entries of the import's scope whose file is gone: ``missing``, or with ``prune``
    deleted (``pruned``)."""
    raws = folder.raws
    if scope is not None:
        for raw in raws:
            raw.setdefault("scope", scope)
    now = core.clock()
    prepared = prepare(raws, now)  # all checked before the store is touched
    results: list[dict[str, Any]] = []
    with core.transaction("entry import") as txn:
        counts = apply(txn, prepared, now, restore=False, results=results)
        kept = {e["id"] for e, _, _ in prepared}
        gone = _gone(core, folder, scope or "global", kept)
        for entry in gone if prune else []:
            kind.bury(txn, entry["id"], later_of(now, entry["updatedAt"]))
            txn.actions.append(("delete", entry["id"], entry["name"]))
    listed = [{"id": e["id"], "name": e["name"], "path": e["source"]["path"]} for e in gone]
    out: dict[str, Any] = {**counts, "results": results, "commit": txn.commit_id}
    out["pruned" if prune else "missing"] = listed
    if folder.passed:
        out["passedOver"] = folder.passed
    return out


def _gone(core: Core, folder: Folder, scope: str, kept: set[str]) -> list[dict[str, Any]]:
    """Live entries of ``scope`` imported from ``folder`` that it no longer holds."""
    with core.reading() as view:
        if view is None:
            return []
        with core.git() as git:
            entries = list(bulk.records(git, view, "entry"))
    junk = tuple(f"skills/{path.name}/" for path in folder.skills)

    def ours(source: dict[str, Any]) -> bool:
        if "folder" in source:
            return bool(source["folder"] == folder.key)
        return bool(junk) and str(source["path"]).startswith(junk)

    return sorted(
        (
            e
            for e in entries
            if e.get("source") is not None
            and e["scope"] == scope
            and e["id"] not in kept
            and ours(e["source"])
        ),
        key=lambda e: (e["source"]["path"], e["name"]),
    )
