"""Asking a running ``xbrain serve`` (the client half, on every prompt's path: it loads
only C modules — ``_socket``, ``stat`` — no json, no typing, no pathlib, not even ``zlib``,
whose shared library took longer to load than its two checksums of a path take here).

Every store has at most one server, behind a Unix socket whose name is derived from the
store's real path, in a private runtime directory: ``$XDG_RUNTIME_DIR/xbrain`` when that
is set, else ``/tmp/xbrain-<uid>``. The directory must be the user's own and 0700, and
the socket the user's own; anything else is never connected to.

A request opens with ``XB3`` and a newline, and the client waits for the server's
``READY`` byte before it sends anything else: a server that is stopped (Ctrl-Z, SIGSTOP)
or busy with another request still has its socket accept connections, and without this
a caller would wait out the whole answer timeout — 10 s for a recall, 300 s for a write
— for a server that had not even read its request. The rest is a header of UTF-8 lines
— the operation, the store's real path, then ``key=value`` lines (values never hold a
newline) — a blank line, and the body (a hook payload or prompt, as read from stdin).
The answer is one line, ``<exit code>``, then the body: what the command prints on
stdout (exit 0) or its one-line error; exit ``NOT_SERVED`` (99) means the server did
nothing. When no server says ``READY`` or answers in time, the caller does the work
itself — a server only ever makes a command faster — except for a write that reached the
server, which is never done twice (exit 1, ``LOST_WRITE``).
"""

from __future__ import annotations

import os
import stat

TYPE_CHECKING = False  # on every prompt's path: no typing at import
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "ANSWER_TIMEOUT",
    "MAGIC",
    "MAX_MESSAGE",
    "MAX_SOCKET_PATH",
    "NOT_SERVED",
    "READY",
    "ask",
    "available",
    "owned",
    "read_all",
    "runtime_dir",
    "socket_path",
]

MAGIC = b"XB3"
READY = b"+"  # the server took this connection and reads the request now
MAX_MESSAGE = 16 << 20
CONNECT_TIMEOUT = 0.2  # a live server accepts at once
READY_TIMEOUT = 0.5  # an idle server says READY within a millisecond or two
ANSWER_TIMEOUT = 10.0  # once it has the request, it is doing the work
NOT_SERVED = 99  # the server did nothing: an operation it does not know; ask elsewhere
WRITE_TIMEOUT = 300.0  # a write is never redone here, so it may take its time
LOST_WRITE = (
    b"xbrain serve stopped answering during this write; it may have been saved (see xbrain log).\n"
)


# A socket's path must fit sun_path: 108 bytes on Linux, 104 on macOS, with the NUL.
MAX_SOCKET_PATH = 103
_SOCKET_NAME = len("/0123456789abcdef.sock")


def runtime_dir() -> str:
    """The private directory the sockets live in (not created here): ``xbrain`` under
    ``$XDG_RUNTIME_DIR``, unless that is unset, relative, or too long for a socket's path."""
    base = os.environ.get("XDG_RUNTIME_DIR", "")
    if base and os.path.isabs(base):
        folder = os.path.join(base, "xbrain")
        if len(os.fsencode(folder)) + _SOCKET_NAME <= MAX_SOCKET_PATH:
            return folder
    return f"/tmp/xbrain-{os.getuid()}"  # checked: ours and 0700


def socket_path(store: str | os.PathLike[str]) -> str:
    """The socket of ``store``'s server (named by two checksums of its real path; a
    server answers only for the store it serves, so even a clash is never wrong)."""
    real = os.fsencode(os.path.realpath(store))
    return os.path.join(runtime_dir(), f"{_crc32(real):08x}{_adler32(real):08x}.sock")


def _crc32(data: bytes) -> int:
    """``zlib.crc32(data)`` (a path's few bytes: loading zlib cost more than this)."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0xEDB88320 & -(crc & 1))
    return crc ^ 0xFFFFFFFF


def _adler32(data: bytes) -> int:
    """``zlib.adler32(data)``."""
    a, b = 1, 0
    for byte in data:
        a = (a + byte) % 65521
        b = (b + a) % 65521
    return (b << 16) | a


def owned(path: str | os.PathLike[str], kind: int) -> bool:
    """Whether ``path`` is, without following a link, a ``kind`` (stat.S_IFDIR or
    S_IFSOCK) that this user owns and nobody else can use."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    private = info.st_mode & 0o077 == 0
    return stat.S_IFMT(info.st_mode) == kind and info.st_uid == os.getuid() and private


def read_all(conn: Any) -> bytes | None:
    """Everything ``conn`` sends until it closes its side, or None when that is more than
    ``MAX_MESSAGE`` (never a truncated message: both ends refuse it whole)."""
    chunks: list[bytes] = []
    size = 0
    while size <= MAX_MESSAGE:
        chunk = conn.recv(1 << 16)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        size += len(chunk)
    return None


def available(store: str | os.PathLike[str]) -> bool:
    """Whether ``store`` has a socket of ours to ask (its server may still be gone)."""
    try:
        import _socket
    except ImportError:
        return False
    if not hasattr(_socket, "AF_UNIX"):
        return False
    path = socket_path(store)
    return owned(os.path.dirname(path), stat.S_IFDIR) and owned(path, stat.S_IFSOCK)


def ask(
    store: str | os.PathLike[str],
    op: str,
    fields: list[tuple[str, str]],
    body: bytes = b"",
    *,
    write: bool = False,
    patience: float = READY_TIMEOUT,
) -> tuple[bool, int, bytes]:
    """``(True, exit code, body)`` from the server for ``op``; ``(False, 0, b"")`` when no
    server of ours answers, or none says ``READY`` in time (the caller then does the
    work: nothing was sent). A ``write`` the server has been sent is never left to the
    caller: if no answer comes, the answer is exit 1 and ``LOST_WRITE``, since the server
    may have committed it. ``patience``: how long to wait for ``READY`` (a request only
    the server can answer, ``stop``, waits out a request it is busy with)."""
    if not available(store):
        return False, 0, b""
    import _socket

    path = socket_path(store)
    lines = [op, os.path.realpath(store), *(f"{key}={value}" for key, value in fields)]
    if any("\n" in line or "\r" in line for line in lines):
        return False, 0, b""  # not expressible: the local path handles it
    header = "\n".join(lines).encode("utf-8", "surrogateescape")
    sent = False
    try:
        conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        try:
            conn.settimeout(CONNECT_TIMEOUT)
            conn.connect(path)
            conn.sendall(MAGIC + b"\n")  # a few bytes: the socket buffer takes them
            conn.settimeout(patience)
            if conn.recv(1) != READY:  # another protocol, or a server closing down
                return False, 0, b""
            conn.settimeout(WRITE_TIMEOUT if write else ANSWER_TIMEOUT)
            sent = True  # from here a write may reach the server
            conn.sendall(header + b"\n\n" + body)
            conn.shutdown(_socket.SHUT_WR)
            received = read_all(conn)
        finally:
            conn.close()
    except OSError:  # none running, stopped or busy (no READY), too slow, or gone midway
        return (True, 1, LOST_WRITE) if write and sent else (False, 0, b"")
    status, _, answer = (received or b"").partition(b"\n")
    if received is None or not status.isdigit() or len(status) > 3:
        return (True, 1, LOST_WRITE) if write else (False, 0, b"")
    if int(status) == NOT_SERVED:
        return False, 0, b""
    return True, int(status), answer
