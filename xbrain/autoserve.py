"""Starting ``xbrain serve`` without being asked, when semantic recall is on.

With semantic recall on, a fresh process that answered in hybrid mode would load the
embedding model first (1–2 s). So when no server answers, a fresh ``recall``,
``search``, ``skill recall`` or hook starts one in the background — a detached
``xbrain serve`` (private socket, idle exit, as when started by hand) — and answers
lexically itself, within its usual time, saying so (``"retrieval": "lexical
(warming)"``); the calls after it go through the server, which holds the model. A hook
never waits for a model load.

At most one server starts: the starter takes ``.git/xbrain/serve.lock`` (``flock``)
and hands the locked descriptor to the server, so the lock lasts as long as the server
runs and a second fresh process racing the first finds it held. A socket something
still accepts on (a server busy with another request, or one started by hand) is left
alone too. ``xbrain config serve.auto off`` turns this off for a store (read from the
entry cache, where recall's settings are kept); ``XBRAIN_SERVE_AUTO=off`` for a
process. Off, or without semantic recall, nothing changes: a fresh process answers in
the store's mode itself, as before.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # on every prompt's path that finds no server: no typing at import
if TYPE_CHECKING:
    from typing import Any

__all__ = ["AUTO_IDLE", "SERVE_LOCK", "WARMING", "start", "wanted", "warming"]

WARMING = "lexical (warming)"
AUTO_IDLE = 1800  # seconds without a request before an auto-started server exits
SERVE_LOCK = os.path.join("xbrain", "serve.lock")


def wanted(store: str | os.PathLike[str]) -> bool:
    """Whether a fresh process for ``store`` should start a server rather than load the
    model: semantic recall is on here (and its extra installed), and neither the store
    (``serve.auto off``) nor the environment (``XBRAIN_SERVE_AUTO=off``) says no."""
    if os.environ.get("XBRAIN_SERVE_AUTO", "").strip().lower() in ("off", "0", "no", "false"):
        return False
    control = os.path.join(store, ".git")
    if not os.path.isfile(os.path.join(control, "xbrain", "semantic.json")):
        return False
    from importlib.util import find_spec

    return find_spec("numpy") is not None and _store_allows(control)


def _store_allows(control: str) -> bool:
    """False when the store's settings say ``serve.auto: off`` (as the entry cache holds
    them; no cache yet: the default, on)."""
    import json
    import sqlite3

    path = os.path.join(control, "xbrain", "entries.sqlite")
    if not os.path.isfile(path):
        return True
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=0.5)
        try:
            row = conn.execute("SELECT value FROM meta WHERE key = 'recall'").fetchone()
        finally:
            conn.close()
        settings: Any = json.loads(row[0]) if row else {}
    except (sqlite3.Error, ValueError, TypeError):
        return True
    serve = settings.get("serve") if isinstance(settings, dict) else None
    return not (isinstance(serve, dict) and serve.get("auto") == "off")


def _listening(store: str | os.PathLike[str]) -> bool:
    """Whether something of ours accepts connections on the store's socket."""
    from .serveclient import available, socket_path

    if not available(store):
        return False
    import _socket

    probe = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        probe.settimeout(0.2)
        probe.connect(socket_path(store))
    except OSError:
        return False  # a socket its server left behind: the new one replaces it
    finally:
        probe.close()
    return True


def serve_command(store: str | os.PathLike[str]) -> list[str]:
    """The command that runs ``xbrain serve`` for ``store`` (made absolute): to be run
    in the file system's root folder, never where the caller is. ``python -m`` puts the
    folder it starts in first on the import path, and a hook runs in the agent's project:
    a ``numpy.py`` or an ``xbrain/`` there would be the server's own code."""
    import sys

    return [sys.executable, "-m", "xbrain", "serve", "--store", os.path.abspath(store)]


def start(store: str | os.PathLike[str]) -> bool:
    """Start a detached ``xbrain serve`` for ``store`` unless one runs or is starting;
    True when this call started it. Never raises: no server is no worse than before."""
    try:
        return _start(store)
    except Exception:
        return False


def _start(store: str | os.PathLike[str]) -> bool:
    if _listening(store):
        return False
    import fcntl

    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(os.path.join(store, ".git", SERVE_LOCK), flags, 0o600)
    except OSError:  # a read-only store: no server of its own
        return False
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # a server holds it (running or loading)
            return False
        import subprocess

        argv = [*serve_command(store), "--idle", str(AUTO_IDLE)]
        subprocess.Popen(
            argv,
            cwd=os.sep,  # ``-m`` puts the start's folder first on the import path (below)
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # not ended with the caller's process group
            pass_fds=(fd,),  # the server holds the lock for as long as it runs
            close_fds=True,
        )
    finally:
        os.close(fd)
    return True


def warming(store: str | os.PathLike[str], asked_mode: str | None) -> bool:
    """For a fresh process no server answered: whether it answers lexically, saying so
    (True: semantic recall is on and a server may start; one is started now). A mode
    the caller ``asked`` for is answered as asked, here — the server still starts for
    the calls after it."""
    if not wanted(store):
        return False
    start(store)
    return asked_mode is None
