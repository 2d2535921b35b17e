"""The shared index files a split git index names (``.git/sharedindex.<sha>``), kept no
longer than an index may name them.

``.git/xbrain/index-shared`` names the bases xbrain wrote: one the index on disk does
not name is removed as soon as xbrain has written the index (a new base is ~20 MB beside
a 100,000-record store's records). A base git wrote and the index does not name is
removed as git itself does: once it is older than ``splitIndex.sharedIndexExpire`` (two
weeks unless set; ``never`` keeps them, ``now`` removes them at once; a value xbrain does
not understand keeps them). git refreshes the time of the base an index it writes
names, so a base in use is never that old.
"""

from __future__ import annotations

import contextlib
import os
import re
import struct
import time
from pathlib import Path

from .indexentry import entry_span

__all__ = ["MARKER", "named", "ours", "own_entries", "replace_file", "settle", "unnamed"]

MARKER = "index-shared"  # under .git/xbrain: the bases xbrain wrote that an index may name
_PREFIX = "sharedindex."
_SHA = re.compile(r"[0-9a-f]{40}")
_AGO = re.compile(r"(\d+)[. ]*(second|minute|hour|day|week|month|year)s?(?:[. ]*ago)?")
_UNIT = {"second": 1, "minute": 60, "hour": 3600, "day": 86400, "week": 7 * 86400}
_UNIT |= {"month": 30 * 86400, "year": 365 * 86400}


def ours(git_dir: Path) -> list[bytes]:
    """The bases xbrain wrote that an index may still name (newest first)."""
    try:
        text = (git_dir / "xbrain" / MARKER).read_text(encoding="ascii")
        return [bytes.fromhex(line) for line in text.split()]
    except (OSError, ValueError, UnicodeDecodeError):
        return []


def _bases(git_dir: Path) -> dict[bytes, Path]:
    """Every shared index file in ``git_dir`` by id."""
    found = {}
    with contextlib.suppress(OSError), os.scandir(git_dir) as listing:
        for item in listing:
            sha = item.name[len(_PREFIX) :]
            if item.name.startswith(_PREFIX) and _SHA.fullmatch(sha):
                found[bytes.fromhex(sha)] = Path(item.path)
    return found


def settle(git_dir: Path, current: bytes | None) -> None:
    """Once the index on disk names base ``current`` (None: none, it is not split): remove
    the other bases xbrain wrote, and those git wrote that have expired."""
    mine = ours(git_dir)
    if mine and mine != [current]:
        kept = f"{current.hex()}\n" if current in mine and current is not None else ""
        replace_file(git_dir / "xbrain" / MARKER, kept.encode())
    others = {sha: path for sha, path in _bases(git_dir).items() if sha != current}
    if not others:
        return
    expiry = None if set(others) <= set(mine) else _expiry(git_dir)
    for sha, path in others.items():
        with contextlib.suppress(OSError):
            if sha in mine or (
                expiry is not None and path.lstat().st_mtime <= time.time() - expiry
            ):
                path.unlink()


def unnamed(git_dir: Path) -> list[Path]:
    """The shared index files the index on disk does not name (what doctor reports)."""
    current = named(git_dir / "index")
    return sorted(path for sha, path in _bases(git_dir).items() if sha != current)


def named(index_path: Path) -> bytes | None:
    """The base the index at ``index_path`` names (None: not split, or unreadable)."""
    with contextlib.suppress(OSError, struct.error, ValueError):
        link = _walk(index_path.read_bytes())[1]
        return link[:20] if link is not None and len(link) >= 20 else None
    return None


def own_entries(index_path: Path) -> list[tuple[bytes, bytes]]:
    """(name, entry) of the entries a split index names itself, not its base's (what a
    user staged past a base that is lost); none for any other index."""
    with contextlib.suppress(OSError, struct.error, ValueError):
        own, link = _walk(index_path.read_bytes())
        return [(name, entry) for name, entry in own if name] if link is not None else []
    return []


def _walk(data: bytes) -> tuple[list[tuple[bytes, bytes]], bytes | None]:
    """((name, entry) of the entries the index ``data`` holds itself, its ``link``
    extension's payload or None)."""
    signature, version, count = struct.unpack_from(">4sLL", data, 0)
    if signature != b"DIRC" or version not in (2, 3):
        raise ValueError(f"index version {version}")
    own, at = [], 12
    for _ in range(count):
        name_at, length, end = entry_span(data, at)
        own.append((data[name_at : name_at + length], data[at:end]))
        at = end
    while at < len(data) - 20:
        (size,) = struct.unpack_from(">L", data, at + 4)
        if data[at : at + 4] == b"link":
            return own, data[at + 8 : at + 8 + size]
        at += 8 + size
    return own, None


def _expiry(git_dir: Path) -> float | None:
    """``splitIndex.sharedIndexExpire`` in seconds before now (None: never)."""
    from dulwich.config import ConfigFile, StackedConfig

    value = b"2.weeks.ago"
    with contextlib.suppress(Exception):  # a config git itself would refuse: the default
        config = StackedConfig([ConfigFile.from_path(str(git_dir / "config"))])
        config.backends += StackedConfig.default_backends()
        value = config.get((b"splitIndex",), b"sharedIndexExpire")
    text = value.decode("ascii", "replace").strip().lower()
    if text == "now":
        return 0.0
    match = _AGO.fullmatch(text)
    return None if match is None else int(match[1]) * _UNIT[match[2]]


def replace_file(path: Path, data: bytes) -> None:
    """Write ``path`` whole through a ``.tmp`` beside it (private; a link not followed)."""
    temp = path.with_name(path.name + ".tmp")
    temp.unlink(missing_ok=True)
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
