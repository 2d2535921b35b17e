"""What one agent session has already been shown: private, local, outside git.

``.git/xbrain/sessions/<session>.json`` maps each shown id to the revision shown (so a
rule changed since is shown in full again). Any non-empty session id works: one that is
not a plain name (letters, digits, ``-``, ``_``, at most 128) is stored under a digest of
it, so an id never names a path. Hook processes of one session may run at once: each
reads and writes the file under an exclusive ``flock`` of its own lock file and replaces
it atomically, so none sees half a file or loses another's update. Files of sessions
idle for a week are removed by a session that writes (at most one sweep an hour).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["SESSION_ID", "file_name", "session_state"]

SESSION_ID = re.compile(r"[A-Za-z0-9_-]{1,128}")
SESSIONS = Path("xbrain") / "sessions"
IDLE_DAYS = 7
SWEEP_EVERY = 3600  # seconds between two sweeps of a store's sessions
SWEPT = ".swept"  # its modification time is the last sweep's
MAX_STATE = 4 << 20  # a session's state file, read no further


@contextlib.contextmanager
def session_state(control: Path, session: str | None) -> Iterator[dict[str, Any]]:
    """The session's state (``{"shown": {id: revision}}``), saved on exit; without a
    session id, a throwaway state."""
    if not session or not control.is_dir():
        yield {"shown": {}}
        return
    name = file_name(session)
    folder = control / SESSIONS
    old = os.umask(0o077)
    try:
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError:  # a read-only store, a file in the way: no state, still an answer
            lock = None
        else:
            lock = _acquire(folder / f"{name}.lock", 10.0)
        if lock is None:
            yield {"shown": {}}  # never block a prompt for long: show as if new
            return
        try:
            path = folder / f"{name}.json"
            state = _read(path)
            yield state
            # the answer stands without it: an unsaved state (a full disk, a directory in
            # the way) only shows rules in full again, as a lock not taken does
            with contextlib.suppress(OSError):
                _write(path, state)
            _sweep(folder)
        finally:
            os.close(lock)  # closing the descriptor releases the flock
    finally:
        os.umask(old)


def file_name(session: str) -> str:
    """The name a session's files take: the id itself when it is a plain name, else
    ``~`` and a digest of it (``~`` is never in a plain name, so the two never meet)."""
    if SESSION_ID.fullmatch(session):
        return session
    import hashlib  # only here: a recall's usual path does not load it

    return "~" + hashlib.sha256(session.encode("utf-8", "surrogatepass")).hexdigest()[:40]


def _acquire(path: Path, wait: float) -> int | None:
    """An exclusive ``flock`` on ``path`` (created 0600), polled for up to ``wait``
    seconds; the open descriptor, or None. (``fcntl`` directly: the ``filelock`` package
    costs ≈ 20 ms to import, a fifth of a recall.)"""
    import fcntl

    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except OSError:  # a planted link, a full disk: no state rather than a failed prompt
        return None
    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            if time.monotonic() >= deadline:
                os.close(fd)
                return None
            time.sleep(0.005)


def _read(path: Path) -> dict[str, Any]:
    from ..errors import XbrainError
    from ..inputs import read_file

    try:
        data = json.loads(read_file(path, MAX_STATE, "too big"))
    except (XbrainError, ValueError, RecursionError):  # missing, odd, damaged: start anew
        return {"shown": {}}
    if not isinstance(data, dict) or not isinstance(data.get("shown"), dict):
        return {"shown": {}}
    return data


def _write(path: Path, state: dict[str, Any]) -> None:
    """Replace the state file whole (the session's lock is held: one writer, so the
    temporary name can be fixed; a link planted there is refused, never followed)."""
    temp = path.with_suffix(".tmp")
    temp.unlink(missing_ok=True)
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(state, handle, separators=(",", ":"))
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


def _sweep(folder: Path) -> None:
    """Forget sessions idle for a week: their state, lock file and any temporary file a
    killed hook left (one whose first save was cut short has only that). At most once
    an hour (``SWEPT`` keeps the time): a sweep reads every session's file, and a week
    of sessions made each prompt pay for all of them (20,000: 58 → 214 ms a hook)."""
    now = time.time()
    marker = folder / SWEPT
    with contextlib.suppress(OSError):
        if now - marker.stat().st_mtime < SWEEP_EVERY:
            return
    with contextlib.suppress(OSError):
        marker.touch(mode=0o600)  # now: the next sweep is an hour away
    cutoff = now - IDLE_DAYS * 86400
    items: list[Path] = []
    with contextlib.suppress(OSError):
        items = [*folder.glob("*.json"), *folder.glob("*.tmp")]
    for item in items:
        with contextlib.suppress(OSError):  # gone already (with its session), or in use
            if item.stat().st_mtime >= cutoff:
                continue
            item.unlink(missing_ok=True)
            if not item.with_suffix(".json").exists():  # the session is gone whole
                item.with_suffix(".tmp").unlink(missing_ok=True)
                item.with_suffix(".lock").unlink(missing_ok=True)
