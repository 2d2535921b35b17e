"""A committed file's bytes read from the working tree, when they are the commit's.

A batch into a 100,000-record store reads ~1,800 catalog and URL-index shards before it
rewrites them: from the packs, each is a lookup in every pack index, an inflate and a
check of its id (~0.27 ms; half a second in all). The working tree holds the same bytes
in plain files (the refresh after each commit writes them), where a read is a tenth of
that. Nothing there is trusted: a file is taken only when it is a regular file (no link
followed, in a directory no link leads to) of a bounded size whose git blob id is the
one the commit names. A hand edit, a refresh still pending, a file removed, a link
planted: the id differs or the file is refused, and the caller reads the pack.
"""

from __future__ import annotations

import hashlib
import os
import stat

__all__ = ["CheckedOut"]

_OPEN = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0)
_MAX = 16 << 20  # past this a file is read from the pack (no store file comes near it)
_UNSAFE = (b"", b".", b"..", b".git")


class CheckedOut:
    """The working tree at ``root`` (a store's folder) as a source of committed blobs."""

    def __init__(self, root: str) -> None:
        self._root = os.fsencode(root)
        self._dirs: dict[bytes, bool] = {b"": True}  # folder → a real folder, no link

    def read(self, path: bytes, blob_id: bytes) -> bytes | None:
        """The bytes of the working-tree file ``path`` when they are blob ``blob_id``
        (hex SHA-1), else None (read it from the object store)."""
        folder, _, name = path.rpartition(b"/")
        if len(blob_id) != 40 or name in _UNSAFE or not self._real_folder(folder):
            return None
        try:
            fd = os.open(os.path.join(self._root, path), _OPEN)
        except (OSError, ValueError):  # absent, a link, a NUL in the name
            return None
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or info.st_size > _MAX:
                return None
            data = os.read(fd, info.st_size + 1)
        except OSError:
            return None
        finally:
            os.close(fd)
        header = b"blob %d\0" % len(data)
        if hashlib.sha1(header + data).hexdigest().encode() != blob_id:  # git's blob id
            return None
        return data

    def _real_folder(self, folder: bytes) -> bool:
        """Whether every component of ``folder`` is a plain name and a directory (links
        are not followed): a folder a link leads to is never read from."""
        known = self._dirs.get(folder)
        if known is None:
            parent, _, name = folder.rpartition(b"/")
            known = name not in _UNSAFE and self._real_folder(parent)
            if known:
                try:
                    known = stat.S_ISDIR(os.lstat(os.path.join(self._root, folder)).st_mode)
                except (OSError, ValueError):
                    known = False
            self._dirs[folder] = known
        return known
