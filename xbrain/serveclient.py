"""Asking a running ``xbrain serve`` (the client half; light: socket, json, zlib).

Every store has at most one server, behind a Unix socket whose name is derived from the
store's real path, in a private runtime directory: ``$XDG_RUNTIME_DIR/xbrain`` when that
is set, else ``/tmp/xbrain-<uid>``. The directory must be the user's own and 0700, and
the socket the user's own; anything else is never connected to. A request is one JSON
line (``{"op", "store", "args"}``) and so is the answer (``{"ok": true, "result"}`` or
``{"ok": false, "error", "code"}``). When no server answers in time, the caller does the
work itself — a server only ever makes a command faster.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import zlib

TYPE_CHECKING = False  # the client is on every prompt's path: no typing, no pathlib
if TYPE_CHECKING:
    from typing import Any

__all__ = ["MAX_MESSAGE", "ServerError", "ask", "runtime_dir", "socket_path"]

MAX_MESSAGE = 16 << 20
CONNECT_TIMEOUT = 0.2  # a live server accepts at once
ANSWER_TIMEOUT = 10.0  # once it has the request, it is doing the work


class ServerError(Exception):
    """The server answered with an error: (message, exit code)."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.message, self.code = message, code


def runtime_dir() -> str:
    """The private directory the sockets live in (not created here)."""
    base = os.environ.get("XDG_RUNTIME_DIR", "")
    if base and os.path.isabs(base):
        return os.path.join(base, "xbrain")
    return f"/tmp/xbrain-{os.getuid()}"  # checked: ours and 0700


def socket_path(store: str | os.PathLike[str]) -> str:
    """The socket of ``store``'s server (named by two checksums of its real path; a
    server answers only for the store it serves, so even a clash is never wrong)."""
    real = os.path.realpath(store).encode()
    return os.path.join(runtime_dir(), f"{zlib.crc32(real):08x}{zlib.adler32(real):08x}.sock")


def owned(path: str | os.PathLike[str], kind: int) -> bool:
    """Whether ``path`` is, without following a link, a ``kind`` (stat.S_IFDIR or
    S_IFSOCK) that this user owns and nobody else can use."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    private = info.st_mode & 0o077 == 0
    return stat.S_IFMT(info.st_mode) == kind and info.st_uid == os.getuid() and private


def ask(store: str | os.PathLike[str], op: str, args: dict[str, Any]) -> tuple[bool, Any]:
    """``(True, result)`` from the server for ``op``; ``(False, None)`` when no server of
    ours answers (the caller then does the work); ``ServerError`` when it answered with
    an error."""
    if not hasattr(socket, "AF_UNIX"):
        return False, None
    path = socket_path(store)
    if not (owned(os.path.dirname(path), stat.S_IFDIR) and owned(path, stat.S_IFSOCK)):
        return False, None
    request = json.dumps({"op": op, "store": os.path.realpath(store), "args": args}).encode()
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(CONNECT_TIMEOUT)
            conn.connect(path)
            conn.settimeout(ANSWER_TIMEOUT)
            conn.sendall(request + b"\n")
            conn.shutdown(socket.SHUT_WR)
            chunks, size = [], 0
            while size <= MAX_MESSAGE:
                chunk = conn.recv(1 << 16)
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
    except OSError:  # none running, busy past the timeout, or gone midway
        return False, None
    try:
        answer = json.loads(b"".join(chunks))
    except ValueError:
        return False, None
    if not isinstance(answer, dict):
        return False, None
    if answer.get("ok") is True:
        return True, answer.get("result")
    message, code = answer.get("error"), answer.get("code")
    if isinstance(message, str) and isinstance(code, int):
        raise ServerError(message, code)
    return False, None
