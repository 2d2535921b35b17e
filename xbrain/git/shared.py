"""The modes of what a push wrote into a repository on this machine.

A push into a bare repository of the user's (a backup) makes what it wrote as private
as the store. A repository made for several Unix accounts (``git init --bare
--shared=group``, ``core.sharedRepository``) gets the modes git itself would give them,
so the other members can read (and push after) what xbrain pushed: ``group`` (or
``true``, ``1``) adds group read and write, ``all`` (``world``, ``everybody``, ``2``)
also lets others read, ``0xxx`` sets exactly that mode (``x`` for directories where
``r`` is), and a directory keeps the set-group-id bit. The pusher's own store is never
touched here.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterable
from pathlib import Path

__all__ = ["settle_written", "shared_mode"]

_GROUP = 0o660
_EVERYBODY = 0o664
_NAMES = {
    b"umask": 0,
    b"false": 0,
    b"no": 0,
    b"off": 0,
    b"group": _GROUP,
    b"true": _GROUP,
    b"yes": _GROUP,
    b"on": _GROUP,
    b"": _GROUP,
    b"all": _EVERYBODY,
    b"world": _EVERYBODY,
    b"everybody": _EVERYBODY,
}


def shared_mode(repo_dir: Path) -> int:
    """The repository's ``core.sharedRepository`` as git reads it: 0 (not shared: the
    umask, here private), a permission to add (``group``: 0o660, ``all``: 0o664), or
    minus the exact file mode (``0640`` → -0o640). A value git refuses counts as 0."""
    from dulwich.config import ConfigFile

    try:
        value = ConfigFile.from_path(str(repo_dir / "config")).get((b"core",), b"sharedRepository")
    except Exception:  # no config, unreadable, or not one dulwich parses: not shared
        return 0
    value = value.strip().lower()
    if value in _NAMES:
        return _NAMES[value]
    try:
        number = int(value.decode("ascii"), 8)
    except (UnicodeDecodeError, ValueError):
        return 0
    if number in (0, 1, 2):
        return (0, _GROUP, _EVERYBODY)[number]
    if number & 0o600 != 0o600 or number & ~0o777:  # git refuses these
        return 0
    return -(number & 0o666)


def _mode_for(mode: int, shared: int) -> int:
    """git's ``calc_shared_perm`` (and ``adjust_shared_perm`` for a directory), from
    the owner's bits of ``mode`` (what the push's private umask left; dulwich's 0444
    packs too). A directory shared by ``group`` or ``all`` keeps the bits it had."""
    own = mode & 0o700
    tweak = -shared if shared < 0 else shared
    if not own & stat.S_IWUSR:
        tweak &= ~0o222
    if own & stat.S_IXUSR:
        tweak |= (tweak & 0o444) >> 2
    new = own | tweak if shared > 0 else tweak
    if stat.S_ISDIR(mode):  # one the push made, or one it added to: never fewer bits
        new |= (new & 0o444) >> 2 | stat.S_ISGID
        if shared > 0:
            new |= stat.S_IMODE(mode)
    return new


def settle_written(repo_dir: Path, since: float, paths: Iterable[Path] | None = None) -> None:
    """Give what a push wrote into the local repository ``repo_dir`` its modes: owner
    only, or as its ``core.sharedRepository`` says. ``paths`` (default: every file and
    directory under ``repo_dir``); those older than the push are left as they were.
    Links are never followed; a file that cannot be changed (another owner's) is left."""
    shared = shared_mode(repo_dir)
    todo = list(paths) if paths is not None else _everything(repo_dir)
    for path in todo:
        with contextlib.suppress(OSError):
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode) or max(info.st_mtime, info.st_ctime) < since - 1:
                continue
            if shared == 0:
                if info.st_mode & 0o077:
                    os.chmod(path, stat.S_IMODE(info.st_mode) & 0o700)
                continue
            wanted = _mode_for(info.st_mode, shared)
            if stat.S_IMODE(info.st_mode) != wanted:
                os.chmod(path, wanted)


def _everything(repo_dir: Path) -> list[Path]:
    """Every file and directory under ``repo_dir`` (links not followed)."""
    out: list[Path] = []
    for directory, dirs, names in os.walk(repo_dir):
        out.extend(Path(directory, name) for name in [*dirs, *names])
    return out
