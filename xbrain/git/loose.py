"""A write's few new objects as loose files, synced together rather than one by one.

dulwich's ``add_object`` writes each object to its ``.lock`` file, syncs it, and renames
it into place: a commit of one record (a blob, a handful of trees, the commit) waits
for eight syncs in a row, most of a fresh ``put``'s time on disk. Here every object is
written to its lock file first, the files are synced at once (one thread each: the
filesystem commits them together, about the cost of one), and only then is each renamed
into place. The order of durability is dulwich's: no object is visible at its name
before its bytes are on disk, and the ref moves only after this returns, so a kill at
any point leaves at worst lock files (the objects marker names them for the next write)
or objects nothing refers to yet.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Sequence
from typing import Any

from dulwich.file import GitFile, adjust_shared_perm
from dulwich.object_store import PACK_MODE, DiskObjectStore
from dulwich.objects import ShaFile, hex_to_filename

__all__ = ["add_loose"]


def add_loose(store: DiskObjectStore, objects: Sequence[ShaFile]) -> None:
    """Add ``objects`` to ``store`` as loose objects (those it has already: freshened,
    as dulwich does, so a concurrent ``git gc`` keeps them). A lock file left by a killed
    writer raises dulwich's ``FileLocked``, with nothing of this call left behind."""
    files: list[Any] = []
    shared = getattr(store, "shared_perm", None)  # core.sharedRepository, as dulwich reads it
    try:
        for obj in {obj.id: obj for obj in objects}.values():  # each object written once
            path = hex_to_filename(os.fspath(store.path), obj.id)
            try:
                os.utime(path, None)
                continue  # there already
            except FileNotFoundError:
                pass
            with contextlib.suppress(FileExistsError):
                os.mkdir(os.path.dirname(path))
                adjust_shared_perm(os.path.dirname(path), shared)
            handle = GitFile(path, "wb", mask=PACK_MODE, fsync=False, shared_perm=shared)
            files.append(handle)
            handle.write(obj.as_legacy_object(compression_level=store.loose_compression_level))
        for handle in files:
            handle.flush()
        if store.fsync_object_files:
            _sync_together([handle.fileno() for handle in files])
        while files:
            files[0].close()  # the rename: the object is in place
            files.pop(0)
    finally:
        for handle in files:
            handle.abort()


def _sync_together(fds: list[int]) -> None:
    """``fsync`` every file descriptor, all at once; the first failure is raised."""
    if len(fds) <= 1:
        for fd in fds:
            os.fsync(fd)
        return
    failures: list[BaseException] = []

    def sync(fd: int) -> None:
        try:
            os.fsync(fd)
        except BaseException as exc:  # handed to the caller's thread
            failures.append(exc)

    threads = [threading.Thread(target=sync, args=(fd,), daemon=True) for fd in fds[1:]]
    for thread in threads:
        thread.start()
    sync(fds[0])
    for thread in threads:
        thread.join()
    if failures:
        raise failures[0]
