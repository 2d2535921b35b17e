"""Reading what a user or a process hands over: bounded, regular files only, sane JSON.

Every file argument is read through :func:`read_file`: at most ``limit + 1`` bytes (so
``/dev/zero`` or a growing file cannot exhaust memory), and only regular files — a FIFO,
a device or a directory is refused before a byte is read (opening never blocks).
:func:`parse_json` refuses nesting deeper than any document xbrain reads, so no later
step can hit Python's recursion limit.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any, BinaryIO

from .errors import CorruptStoreError, InvalidInputError, NotFoundError

__all__ = [
    "MAX_DEPTH",
    "MAX_INPUT",
    "check_store_dir",
    "no_store",
    "parse_json",
    "read_file",
    "read_json_input",
    "whole_number",
]

MAX_INPUT = 10 * 1024 * 1024
MAX_DEPTH = 64


def whole_number(value: object, low: int, high: int, message: str) -> None:
    """Refuse (InvalidInputError ``message``) anything but an integer from ``low`` to
    ``high``; ``True`` is not one."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InvalidInputError(message)


def read_file(path: Path, limit: int, too_big: str, *, follow: bool = True) -> bytes:
    """The bytes of regular file ``path`` if it holds at most ``limit`` of them.

    Missing: NotFoundError. Not a regular file (a directory, a FIFO, a device; with
    ``follow`` False, a symbolic link too) or larger than ``limit``: InvalidInputError
    (``too_big`` is the message for the latter).
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | (0 if follow else getattr(os, "O_NOFOLLOW", 0))
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise NotFoundError(f"No such file: {path}") from None
    except IsADirectoryError:
        raise InvalidInputError(f"Not a regular file: {path}") from None
    except OSError as exc:  # a link not followed is ELOOP
        raise InvalidInputError(f"Cannot read {path}: {exc.strerror}.") from None
    try:
        try:
            info: os.stat_result | None = os.fstat(fd)
        except OSError:
            info = None
        if info is None or not stat.S_ISREG(info.st_mode):
            raise InvalidInputError(f"Not a regular file: {path}")
        data = _read_up_to(fd, limit + 1, info.st_size)
    finally:
        os.close(fd)
    if len(data) > limit:
        raise InvalidInputError(too_big)
    return data


def _read_up_to(fd: int, most: int, size: int) -> bytes:
    """At most ``most`` bytes of ``fd`` from where it is, to its end: one read of the
    size ``fstat`` gave plus one byte (the end seen), more when the file grew meanwhile.
    A buffered ``read(most)`` set aside ``most`` bytes for each file: a 64 MB bound made
    reading 1,800 small files five times as slow."""
    chunks, left = [], most
    ask = size + 1
    while left > 0:
        want = min(ask, left)
        chunk = os.read(fd, want)
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
        if len(chunk) < want and most - left >= size:  # short of what was asked, at the
            break  # end fstat saw: the end (no second read to be told so)
        ask = max(ask, 1 << 16)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def depth_exceeds(value: Any, limit: int = MAX_DEPTH) -> bool:
    """True when ``value`` nests lists/objects deeper than ``limit`` (iterative walk)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def parse_json(data: bytes | str, invalid: str) -> Any:
    """One JSON document; ``invalid`` is the message for anything unreadable or too deep."""
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
        value = json.loads(text)
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise InvalidInputError(invalid) from None
    if depth_exceeds(value):
        raise InvalidInputError(invalid.rstrip(".") + f" (nested deeper than {MAX_DEPTH}).")
    return value


def read_json_input(source: Path | BinaryIO, *, limit: int = MAX_INPUT) -> Any:
    """Parse one JSON document of at most ``limit`` bytes.

    Errors: ``Input exceeds 10 MiB.``, ``Invalid resource JSON.``, or not found.
    """
    if isinstance(source, Path):
        data = read_file(source, limit, "Input exceeds 10 MiB.")
    else:
        data = source.read(limit + 1)
    if len(data) > limit:
        raise InvalidInputError("Input exceeds 10 MiB.")
    return parse_json(data, "Invalid resource JSON.")


def check_store_dir(path: Path) -> None:
    """Refuse a store path that is a file, or a non-empty directory without ``.git``
    (every command says so, rather than answering as if no store were there yet)."""
    if path.exists() and not path.is_dir():
        raise CorruptStoreError(f"Store path is not a directory: {path}")
    if path.is_dir() and not (path / ".git").is_dir() and any(path.iterdir()):
        raise CorruptStoreError(f"Not an xbrain store (a non-empty directory without .git): {path}")


def no_store(where: str) -> str | None:
    """What to say when no store is at ``where`` — a path that does not exist, or an empty
    folder — else None. ``search`` and ``recall`` there answer nothing (exit 0, as they
    always did) and a hook says nothing, but a mistyped --store or XBRAIN_STORE must not
    look like a store with nothing relevant in it. (A file, or a folder that is not a
    store, is an error of its own: ``check_store_dir``.)"""
    if os.path.isdir(os.path.join(where, ".git")):
        return None
    try:
        missing = not os.path.lexists(where) or (os.path.isdir(where) and not os.listdir(where))
    except OSError:
        return None
    if not missing:
        return None
    return (
        f"No store at {where}: nothing to answer from (the first write creates it; "
        "--store or XBRAIN_STORE chooses another)."
    )
