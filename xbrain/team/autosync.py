"""Automatic sync (``xbrain config sync.auto on``): a device switch of the personal store.

When it is on, the ``SessionStart`` hook starts a background pull of the personal
store's ``origin`` (when it has one) and of every team, and each write starts a
background push (debounced: a write that follows within ``XBRAIN_SYNC_DEBOUNCE``
seconds, 3 by default, takes over; retried with backoff). Neither ever waits on the
network: the work runs in a detached process bounded by a short network timeout, and
what it found (last sync, last error) is kept for ``xbrain status``. Offline is normal:
a failed sync is remembered, never raised.

Cheap to import (the hook and every write ask whether it is on): no git, no click.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

__all__ = ["after_write", "enabled", "report", "set_auto", "start", "worker"]

_SWITCH = os.path.join(".git", "xbrain", "sync.json")
_TOKEN = os.path.join(".git", "xbrain", "sync-push.token")
_TIMEOUT = "20"  # seconds a background sync gives each remote
_BACKOFF = (0.0, 2.0, 8.0)


def enabled(store: str | Path) -> bool:
    """Whether automatic sync is on for this store on this device."""
    try:
        with open(os.path.join(os.fspath(store), _SWITCH), "rb") as handle:
            value = json.loads(handle.read(4096))
    except (OSError, ValueError):
        return False
    return isinstance(value, dict) and value.get("auto") is True


def set_auto(store: str | Path, on: bool) -> dict[str, Any]:
    """Switch automatic sync on or off here (a device setting: never committed). Like
    every other ``xbrain config KEY VALUE``, a write: the first creates the store (a
    member whose memory is all the team's has none until then)."""
    if not os.path.isdir(os.path.join(os.fspath(store), ".git")):
        from pathlib import Path

        from ..core import Core

        Core(Path(store)).create()  # a file, or a folder that is no store: refused
    path = os.path.join(os.fspath(store), _SWITCH)
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    temp = f"{path}.{os.getpid()}.tmp"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        json.dump({"auto": on}, handle)
    os.replace(temp, path)
    return {"sync": {"auto": on}}


def start(store: str | Path, teams: str | Path, what: str) -> None:
    """Start the background ``pull`` or ``push`` for ``store`` and the teams under
    ``teams``; never waits, never raises."""
    import subprocess

    env = dict(os.environ)
    timeout = env.get("XBRAIN_NETWORK_TIMEOUT", _TIMEOUT)
    with contextlib.suppress(ValueError):
        timeout = str(min(float(timeout), float(_TIMEOUT)))
    env["XBRAIN_NETWORK_TIMEOUT"] = timeout
    code = "from xbrain.team.autosync import worker; worker()"
    args = [sys.executable, "-c", code, what, os.fspath(store), os.fspath(teams)]
    with contextlib.suppress(OSError):
        subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            env=env,
            close_fds=True,
        )


def after_write(store: str | Path, teams: str | Path) -> Any:
    """An after-commit hook: a background push once writes pause (when sync is on)."""

    def hook(*_: Any) -> None:
        if enabled(store):
            start(store, teams, "push")

    return hook


def worker(argv: list[str] | None = None) -> None:
    """The background process: ``pull STORE TEAMS`` or ``push STORE TEAMS``."""
    from pathlib import Path

    what, store, teams = (argv or sys.argv[1:])[:3]
    if what == "push":
        token = f"{os.getpid()} {time.time()}"
        path = os.path.join(store, _TOKEN)
        with contextlib.suppress(OSError):
            # private as every store file (the worker has the user's umask), never a link
            flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW
            with os.fdopen(os.open(path, flags, 0o600), "w") as handle:
                os.fchmod(handle.fileno(), 0o600)  # an older version's token: 0644
                handle.write(token)
            time.sleep(float(os.environ.get("XBRAIN_SYNC_DEBOUNCE", "3")))
            with os.fdopen(os.open(path, os.O_RDONLY | os.O_NOFOLLOW)) as handle:
                if handle.read() != token:
                    return  # a later write pushes
    with contextlib.suppress(Exception):
        _sync(Path(store), Path(teams), what)


def _sync(store: Path, teams: Path, what: str) -> None:
    """Pull (then push) or push the personal store's origin and the teams, retried."""
    from ..core import DEFAULT_IDENTITY
    from ..errors import XbrainError
    from ..store import Store
    from ..timestamps import now_timestamp
    from .manage import push, sync
    from .place import team_layers
    from .syncstate import note_sync, read_sync

    personal = Store(store)
    with personal.core.reading() as view:  # who the member is (as share.identity_of)
        who = view.config().identity if view is not None else DEFAULT_IDENTITY
    has_origin = "origin" in {r["name"] for r in personal.remote_list()["remotes"]}
    for delay in _BACKOFF:
        time.sleep(delay)
        error = None
        if has_origin:
            try:
                if what == "pull":
                    personal.remote_pull("origin")
                try:
                    personal.remote_push("origin")
                except XbrainError as exc:
                    if "lacks" not in exc.message:
                        raise
                    personal.remote_pull("origin")
                    personal.remote_push("origin")
                note_sync(store, lastSync=now_timestamp(), lastError=None, ahead=False)
            except XbrainError as exc:
                error = exc.message
                note_sync(store, lastAttempt=now_timestamp(), lastError=error, ahead=True)
        for layer in team_layers(teams):
            if what == "push" and not read_sync(layer.path).get("ahead"):
                continue
            try:
                if what == "pull":
                    sync(teams, None, layer.name, who)
                else:
                    push(teams, layer.name)
            except XbrainError as exc:
                error = error or exc.message
        if error is None:
            return


def report(store: str | Path, teams: str | Path) -> dict[str, Any]:
    """What ``xbrain status`` says of sync: the switch, and per store and team the last
    sync, the last error and commits ahead of / behind what the remote last held."""
    from .place import team_layers
    from .syncstate import read_sync

    def one(path: str | Path) -> dict[str, Any]:
        state = read_sync(path)
        ahead, behind, why = _distance(path)
        unknown = {} if why is None else {"note": f"ahead and behind unknown: {why}"}
        return {
            "lastSync": state.get("lastSync"),
            "lastError": state.get("lastError"),
            "ahead": ahead,
            "behind": behind,
            **unknown,
        }

    return {
        "auto": enabled(store),
        "store": one(store),
        "teams": [{"name": layer.name, **one(layer.path)} for layer in team_layers(teams)],
    }


def _distance(store: str | Path) -> tuple[int | None, int | None, str | None]:
    """Commits on ``main`` the remote lacks, and the remote's this store lacks, as of
    the last fetch or push; when they cannot be counted, None and None and why."""
    from pathlib import Path

    from ..core import CommitId, Core
    from ..errors import XbrainError
    from ..search.query import main_head

    control = Path(store) / ".git"
    try:
        tracked = (control / "refs" / "remotes" / "origin" / "main").read_text().strip()
    except OSError:
        try:
            named = '[remote "origin"]' in (control / "config").read_text(errors="replace")
        except OSError:
            named = False
        if not named:
            return None, None, "no remote named origin"
        return None, None, "origin was never reached from this device (no fetch or push yet)"
    head = main_head(control)
    if head is None or len(tracked) != 40:
        return None, None, "no commit here, or what origin held was not recorded"
    try:
        with Core(Path(store)).git() as git:
            ours, theirs = _reach(git, CommitId(head)), _reach(git, CommitId(tracked))
    except (XbrainError, OSError, KeyError):
        return None, None, "the commits origin last held cannot be read here"
    if ours is None or theirs is None:
        return None, None, f"more than {_REACH:,} commits to compare"
    return len(ours - theirs), len(theirs - ours), None


_REACH = 100_000


def _reach(git: Any, start: str, limit: int = _REACH) -> set[str] | None:
    """Every commit reachable from ``start`` (git's ``rev-list``: both sides of a merge,
    so a merge a pull made counts with what it brought); None past ``limit``."""
    seen: set[str] = set()
    todo = [start]
    while todo:
        commit = todo.pop()
        if commit in seen:
            continue
        if len(seen) >= limit:
            return None
        seen.add(commit)
        todo.extend(str(p) for p in git.commit_info(commit).parents)
    return seen
