"""A skill from a ZIP archive, read in memory and never extracted (SPEC §12).

The archive is hostile until every member has passed: its size, each member's name
(the component path rules of :mod:`.skillformat`), type (regular files only: no symlink,
device or FIFO), encryption, declared and actual size, compression ratio, and the names'
uniqueness after NFC and case folding. Only then are the files returned; a refusal is one
:class:`~xbrain.errors.InvalidInputError` (exit 4) and nothing has been written.

``__MACOSX/`` members and ``.DS_Store`` files are skipped and reported; one wrapper
directory (``my-skill/SKILL.md``) is stripped.
"""

from __future__ import annotations

import io
import stat
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import InvalidInputError
from ..paths import same_file_key
from .skillformat import (
    MAX_COMPONENT_BYTES,
    MAX_COMPONENTS,
    MAX_SKILL_MD_BYTES,
    SKILL_MD,
    check_path,
    kept_by_git,
)

if TYPE_CHECKING:
    import zipfile

__all__ = ["MAX_ARCHIVE_BYTES", "MAX_RATIO", "SkillArchive", "read_skill_zip"]

MAX_ARCHIVE_BYTES = 8 * 1024 * 1024
MAX_RATIO = 100  # uncompressed : compressed, per member
MAX_MEMBERS = 4 * MAX_COMPONENTS  # directories and skipped junk included
_UNIX = 3  # ZipInfo.create_system of archives made on Unix (mode bits in external_attr)


@dataclass(frozen=True)
class SkillArchive:
    """The files of a skill (path → exact bytes, ``SKILL.md`` included) and what was
    skipped (``__MACOSX/`` and ``.DS_Store`` members)."""

    files: dict[str, bytes]
    skipped: tuple[str, ...]
    executable: frozenset[str] = frozenset()  # files whose Unix mode has an execute bit


def read_skill_zip(data: bytes) -> SkillArchive:
    """Check a ZIP archive holding one skill and return its files."""
    if len(data) > MAX_ARCHIVE_BYTES:
        raise InvalidInputError(f"The archive is {len(data):,} bytes; the limit is 8 MiB.")
    import zipfile  # here: a skill saved from a folder or a SKILL.md never loads it

    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except Exception:  # zipfile's parser fails in many ways on hostile bytes; all mean this
        raise InvalidInputError("Not a ZIP archive (or a damaged one).") from None
    with archive:
        infos = archive.infolist()
        if len(infos) > MAX_MEMBERS:
            raise InvalidInputError(f"The archive has over {MAX_MEMBERS} members.")
        kept, skipped = _members(infos)
        if len(kept) > MAX_COMPONENTS + 2:  # before reading any (SKILL.md, an export's capsule)
            raise InvalidInputError(
                f"The archive has {len(kept)} files; a skill has a {SKILL_MD} and at most "
                f"{MAX_COMPONENTS} components."
            )
        files = {path: _read(archive, info, path) for path, info in kept.items()}
    marked = {path for path, info in kept.items() if _executable(info)}
    unwrapped = _unwrap(files)
    if unwrapped is not files:  # the wrapper directory stripped: the same for the marks
        cut = len(next(iter(files)).split("/", 1)[0]) + 1
        marked = {path[cut:] for path in marked}
    return SkillArchive(unwrapped, tuple(skipped), frozenset(marked))


def _executable(info: zipfile.ZipInfo) -> bool:
    """Whether a member made on Unix has an execute bit (0 when the archive has no modes)."""
    return info.create_system == _UNIX and bool((info.external_attr >> 16) & 0o111)


def _members(infos: list[zipfile.ZipInfo]) -> tuple[dict[str, zipfile.ZipInfo], list[str]]:
    """The file members by checked path, and the names skipped; refuses the first bad one."""
    kept: dict[str, zipfile.ZipInfo] = {}
    skipped: list[str] = []
    seen: set[str] = set()
    for info in infos:
        name = info.filename
        shown = ascii(name)
        if info.flag_bits & 0x1:
            raise InvalidInputError(f"Archive member {shown} is encrypted.")
        # the file type, where the archive recorded one (Unix mode bits; 0 when none)
        kind = stat.S_IFMT(info.external_attr >> 16) if info.create_system == _UNIX else 0
        if kind == stat.S_IFLNK:
            raise InvalidInputError(f"Archive member {shown} is a symbolic link.")
        if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
            raise InvalidInputError(f"Archive member {shown} is not a regular file.")
        is_dir = name.endswith("/") or kind == stat.S_IFDIR
        bare = name.rstrip("/") if is_dir else name
        # .gitignore, .github/ (a repository's download) are skipped, never written; an
        # escaping or absolute name is refused whole all the same
        if kept_by_git(check_path(bare, in_store=False)):
            skipped.append(name)
            continue
        path = check_path(bare)  # every name, dirs too
        key = same_file_key(path)
        if key in seen:
            raise InvalidInputError(
                f"Archive member {shown} repeats another name (after NFC and case folding)."
            )
        seen.add(key)
        parts = path.split("/")
        if parts[0] == "__MACOSX" or parts[-1] == ".DS_Store":
            skipped.append(path)
            continue
        if is_dir:
            continue
        limit = MAX_SKILL_MD_BYTES if parts[-1] == SKILL_MD else MAX_COMPONENT_BYTES
        if info.file_size > limit:
            raise InvalidInputError(
                f"Archive member {shown} is {info.file_size:,} bytes; the limit is "
                f"{limit // 1024} KiB."
            )
        if info.file_size > MAX_RATIO * max(info.compress_size, 1):
            raise InvalidInputError(
                f"Archive member {shown} expands over {MAX_RATIO}:1 (a zip bomb?)."
            )
        kept[path] = info
    return kept, skipped


def _read(archive: zipfile.ZipFile, info: zipfile.ZipInfo, path: str) -> bytes:
    """A member's bytes, read no further than it declares, checked against its CRC."""
    shown = ascii(path)
    try:
        with archive.open(info) as member:
            content = member.read(info.file_size + 1)
            extra = member.read(1)  # at the end: zipfile checks the CRC here
    except Exception as exc:  # bad CRC, unknown method, broken stream: all a damaged member
        reason = " ".join(str(exc).split())[:120] or type(exc).__name__
        raise InvalidInputError(f"Archive member {shown} cannot be read: {reason}.") from None
    if len(content) != info.file_size or extra:
        raise InvalidInputError(f"Archive member {shown} is not the size it declares.")
    return content


def _unwrap(files: dict[str, bytes]) -> dict[str, bytes]:
    """Strip one wrapper directory, then insist on exactly one SKILL.md, at the root."""
    tops = {path.split("/", 1)[0] for path in files}
    if SKILL_MD not in files and len(tops) == 1 and all("/" in path for path in files):
        top = tops.pop()
        files = {path[len(top) + 1 :]: data for path, data in files.items()}
    instructions = sorted(path for path in files if path.split("/")[-1] == SKILL_MD)
    if instructions != [SKILL_MD]:
        if not instructions:
            raise InvalidInputError(f"The archive has no {SKILL_MD}.")
        where = ", ".join(ascii(path) for path in instructions)
        raise InvalidInputError(
            f"The archive must hold one {SKILL_MD}, at its root (or in one wrapper "
            f"directory); it holds {len(instructions)}: {where}."
        )
    return files
