"""A committed file's bytes read from the working tree, when they are the commit's.

A batch into a 100,000-record store reads ~1,800 catalog and URL-index shards before it
rewrites them: from the packs, each is a lookup in every pack index, an inflate and a
check of its id (95 ms in all). The working tree holds the same bytes in plain files
(the refresh after each commit writes them), where the same reads take 31 ms. Nothing
there is trusted: a file is taken only when each component of its path is a plain name,
every folder on the way is a folder (no link), the file opened is a regular file of at
most ``_MAX`` bytes at exactly the path asked for (a folder swapped for a link after it
was looked at shows in the name the kernel gives the open file), and its git blob id is
the one the commit names. A hand edit, a refresh still pending, a file removed or
padded, a link planted: the file is refused and the caller reads the object store. Only
where the kernel names open files (``/proc/self/fd``: Linux); elsewhere never.
"""

from __future__ import annotations

import hashlib
import os
import stat

from ..paths import component_problem

__all__ = ["CheckedOut", "blob_sha"]

_OPEN = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0)
_MAX = 256 << 10  # larger files are read from the object store (shards are ~8 KB): a file
# padded in the working tree costs at most this much reading and hashing, once
_NAMES = b"/proc/self/fd/"


def blob_sha(data: bytes) -> str:
    """The git (SHA-1) blob id of ``data``, hex: what ``Blob.from_string(data).id`` says,
    without building the object (the hand-edit check and a refresh hash every file a
    batch writes)."""
    digest = hashlib.sha1(b"blob %d\0" % len(data))
    digest.update(data)
    return digest.hexdigest()


class CheckedOut:
    """The working tree at ``root`` (a store's folder) as a source of committed blobs."""

    def __init__(self, root: str) -> None:
        self._root = os.fsencode(os.path.realpath(root))
        self._dirs: dict[bytes, bool] = {b"": os.path.isdir(_NAMES)}  # folder → safe

    def read(self, path: bytes, blob_id: bytes) -> bytes | None:
        """The bytes of the working-tree file ``path`` when they are blob
        ``blob_id`` (hex SHA-1), else None (read it from the object store)."""
        folder, _, name = path.rpartition(b"/")
        if len(blob_id) != 40 or component_problem(name) or not self._plain_folder(folder):
            return None
        where = self._root + b"/" + path
        try:
            fd = os.open(where, _OPEN)
        except (OSError, ValueError):  # absent, a link, a NUL in the name
            return None
        try:
            if os.readlink(_NAMES + b"%d" % fd) != where:  # reached through a link
                return None
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or info.st_size > _MAX:
                return None
            data = os.read(fd, info.st_size + 1)
        except OSError:
            return None
        finally:
            os.close(fd)
        return data if blob_sha(data).encode() == blob_id else None

    def _plain_folder(self, folder: bytes) -> bool:
        """Whether each component of ``folder`` is a plain name and a folder (a link is
        not one), as seen when first asked."""
        known = self._dirs.get(folder)
        if known is None:
            parent, _, name = folder.rpartition(b"/")
            known = not component_problem(name) and self._plain_folder(parent)
            if known:
                try:
                    known = stat.S_ISDIR(os.lstat(self._root + b"/" + folder).st_mode)
                except (OSError, ValueError):
                    known = False
            self._dirs[folder] = known
        return known
