"""The git index brought along beside a commit's hooks: a thread updates it (after
writing the files it stats, for a big refresh) while the caller goes on."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from pathlib import Path

from .index import update

__all__ = ["Update"]

Changes = Mapping[bytes, bytes | None]


class Update:
    """:func:`update` run in a thread beside the caller's own work (a commit's hooks):
    reading, hashing and writing a 17 MB index mostly releases the interpreter.
    ``changes`` may be a function that returns them (writing the files they stat), run
    first on the same thread. ``wait`` returns what :func:`update` returned, or raises
    what either raised; ``changes`` holds the changes once ``wait`` returned."""

    def __init__(
        self,
        index_path: Path,
        changes: Changes | Callable[[], Changes],
        stamp: Path,
    ):
        self.changes: Changes = {} if callable(changes) else changes
        self._done: bool | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(
            target=self._run, args=(index_path, changes, stamp), name="xbrain-index"
        )
        self._thread.start()

    def _run(
        self,
        index_path: Path,
        changes: Changes | Callable[[], Changes],
        stamp: Path,
    ) -> None:
        try:
            if callable(changes):
                self.changes = changes()
            self._done = update(index_path, self.changes, stamp)
        except BaseException as exc:  # handed to the caller by wait()
            self._error = exc

    def wait(self) -> bool:
        """Whether the index was updated (False: a form this editor leaves to dulwich)."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        return bool(self._done)
