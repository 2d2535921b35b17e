"""Where a skill's files come from: a directory, a ``SKILL.md``, a ZIP, or stdin.

Everything from outside is hostile until checked: a directory is walked without following
a link (a link, device or FIFO is refused, not skipped), every file's size is checked
before it is read and the read is bounded, and a ZIP goes through
:mod:`xbrain.kinds.skillzip`. What comes back is path → exact bytes, for
:func:`xbrain.kinds.skillformat.manifest` to check further.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from ..errors import InvalidInputError, NotFoundError
from ..kinds.skillformat import (
    MAX_COMPONENT_BYTES,
    MAX_COMPONENTS,
    MAX_DEPTH,
    MAX_SKILL_MD_BYTES,
    SKILL_MD,
    check_path,
)
from ..kinds.skillzip import MAX_ARCHIVE_BYTES, read_skill_zip
from ..paths import git_own_name

__all__ = ["CAPSULE", "Gathered", "from_path", "from_stream"]

CAPSULE = ".xbrain-capsule.json"  # what export adds beside the skill: never a file of it
_JUNK = ("__MACOSX", ".DS_Store")  # and git's own files: paths.git_own_name


@dataclass
class Gathered:
    """A skill's files as read, what was skipped, and how it came (``file`` or ``zip``);
    ``capsule``: the bytes of an export's ``.xbrain-capsule.json`` found at its root
    (taken out of ``files``, unchecked: :mod:`.provenance` reads it)."""

    files: dict[str, bytes]
    origin: str
    skipped: list[str] = field(default_factory=list)
    executable: set[str] = field(default_factory=set)  # files with an execute bit
    capsule: bytes | None = None


def from_stream(stream: BinaryIO) -> Gathered:
    """A ``SKILL.md`` or a ZIP on stdin (at most 8 MiB)."""
    data = stream.read(MAX_ARCHIVE_BYTES + 1)
    if len(data) > MAX_ARCHIVE_BYTES:
        raise InvalidInputError("Input exceeds 8 MiB.")
    return _from_bytes(data)


def _from_bytes(data: bytes) -> Gathered:
    if data.startswith(b"PK"):
        archive = read_skill_zip(data)
        gathered = Gathered(
            dict(archive.files), "zip", list(archive.skipped), set(archive.executable)
        )
        gathered.capsule = gathered.files.pop(CAPSULE, None)
        return gathered
    if len(data) > MAX_SKILL_MD_BYTES:
        raise InvalidInputError(f"{SKILL_MD} is {len(data):,} bytes; the limit is 64 KiB.")
    return Gathered({SKILL_MD: data}, "file")


def from_path(path: Path) -> Gathered:
    """A skill directory, a lone ``SKILL.md``, or a ZIP file. The argument itself may be
    a link the user made (it is their choice); nothing inside a directory is followed."""
    try:
        info = path.stat()
    except FileNotFoundError:
        raise NotFoundError(f"No such file or directory: {path}") from None
    if stat.S_ISDIR(info.st_mode):
        return _from_directory(path.resolve())
    if not stat.S_ISREG(info.st_mode):
        raise InvalidInputError(f"Not a regular file or directory: {path}")
    if info.st_size > MAX_ARCHIVE_BYTES:
        raise InvalidInputError(f"{path} is {info.st_size:,} bytes; the limit is 8 MiB.")
    return _from_bytes(_read(path.resolve(), MAX_ARCHIVE_BYTES))


def _read(path: Path, limit: int) -> bytes:
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise InvalidInputError(f"Not a regular file: {path}")
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise InvalidInputError(f"{path} is over {limit // 1024} KiB.")
    return data


def _from_directory(root: Path) -> Gathered:
    """Every regular file under ``root`` (no link followed, every size bounded)."""
    gathered = Gathered({}, "file")
    pending = [(root, "")]
    while pending:
        directory, prefix = pending.pop()
        with os.scandir(directory) as entries:
            for entry in sorted(entries, key=lambda e: e.name):
                rel = prefix + entry.name
                if entry.name in _JUNK or git_own_name(entry.name):
                    gathered.skipped.append(rel + ("/" if entry.is_dir() else ""))
                    continue
                mode = entry.stat(follow_symlinks=False).st_mode
                if stat.S_ISDIR(mode):
                    if rel.count("/") + 1 >= MAX_DEPTH:
                        raise InvalidInputError(f"{rel!a} is deeper than {MAX_DEPTH} levels.")
                    pending.append((Path(entry.path), rel + "/"))
                    continue
                if not stat.S_ISREG(mode):
                    what = "a symbolic link" if stat.S_ISLNK(mode) else "not a regular file"
                    raise InvalidInputError(f"{rel!a} in the skill directory is {what}.")
                check_path(rel)
                limit = MAX_SKILL_MD_BYTES if rel == SKILL_MD else MAX_COMPONENT_BYTES
                if len(gathered.files) > MAX_COMPONENTS:
                    raise InvalidInputError(
                        f"A skill has a {SKILL_MD} and at most {MAX_COMPONENTS} components."
                    )
                gathered.files[rel] = _read(Path(entry.path), limit)
                if mode & 0o111:
                    gathered.executable.add(rel)
    if SKILL_MD not in gathered.files:
        raise InvalidInputError(f"The directory {root} has no {SKILL_MD}.")
    gathered.capsule = gathered.files.pop(CAPSULE, None)  # an unzipped capsule
    gathered.executable.discard(CAPSULE)
    return gathered
