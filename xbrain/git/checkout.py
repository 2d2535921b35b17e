"""What git itself puts in a store's working tree: which commit ``HEAD`` names, how
git's own checkouts write files there, and the files its commands leave in ``.git``."""

from __future__ import annotations

import os
import stat
from typing import Any

from dulwich.refs import Ref

from .objects import MAIN, PLAIN_LINE_ENDINGS, PRIVATE_SETTINGS, config_change
from .repo import Repository

__all__ = ["Checkout"]


class Checkout(Repository):
    """The store as a plain git checkout: ``HEAD``, ``core.autocrlf``, git's own files."""

    def keep_git_files_private(self) -> None:
        """Remove group and other permissions from the files at the top of ``.git`` that
        a plain git command wrote with its umask: git gives its objects, refs and index
        ``core.sharedRepository``'s 0600, but not ``COMMIT_EDITMSG``, ``FETCH_HEAD``,
        ``MERGE_MSG``... (0644 under the usual umask). One listing and a stat a file;
        a link is never followed, a file that cannot be changed is left as it is."""
        try:
            found = [e for e in os.scandir(self.control_dir) if e.is_file(follow_symlinks=False)]
        except OSError:
            return
        for entry in found:
            try:
                if entry.stat(follow_symlinks=False).st_mode & 0o077:
                    _private(entry.path)
            except OSError:
                continue

    def checked_out(self) -> str | None:
        """What the working tree's ``HEAD`` names when it is not ``main`` (a plain ``git
        checkout``): ``branch NAME`` or ``commit SHA``; None when it is ``main``."""
        try:
            chain, sha = self._repo.refs.follow(Ref(b"HEAD"))
        except (KeyError, ValueError, OSError):
            return "an unreadable HEAD"
        if chain[-1] == MAIN:
            return None
        if len(chain) > 1:
            name = chain[-1].decode("utf-8", "replace")
            return f"branch {name.removeprefix('refs/heads/')}"
        return f"commit {sha.decode()[:12]}" if sha else "an unreadable HEAD"

    def line_endings_kept(self) -> bool:
        """Whether git's own checkouts here keep files byte for byte (``core.autocrlf``
        false in ``.git/config``, over any global setting): a CRLF copy of a record is a
        file xbrain did not write, so every write to it would be refused as a hand edit."""
        try:
            value = self._repo.get_config().get((b"core",), b"autocrlf")
        except KeyError:
            return False
        return value.strip().lower() == b"false"

    def keep_line_endings(self) -> None:
        """Set ``core.autocrlf`` false in this repository's ``.git/config``."""
        with config_change():
            config = self._repo.get_config()
            config.set(*PLAIN_LINE_ENDINGS)
            config.write_to_path()

    def keep_private_settings(self) -> list[str]:
        """Set in ``.git/config`` each private setting a store is made with
        (``core.sharedRepository`` 0600, ``gc.auto`` 0) that it lacks (a plain git
        clone); one set to another value is the user's choice and kept. The names set."""
        with config_change():
            config = self._repo.get_config()
            missing = [each for each in PRIVATE_SETTINGS if not _has(config, *each[:2])]
            for section, name, value in missing:
                config.set(section, name, value)
            if missing:
                config.write_to_path()
        return [f"{section[0].decode()}.{name.decode()}" for section, name, _ in missing]


def _has(config: Any, section: tuple[bytes, ...], name: bytes) -> bool:
    """Whether ``config`` sets ``name`` in ``section``."""
    try:
        config.get(section, name)
    except KeyError:
        return False
    return True


def _private(path: str) -> None:
    """``path``'s mode without group and other bits, opened without following a link."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISREG(mode):
            os.fchmod(fd, stat.S_IMODE(mode) & 0o700)
    finally:
        os.close(fd)
