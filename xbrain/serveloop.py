"""The connections of ``xbrain serve``: every one at once, none waiting on another.

A selector takes in what each connection sends, so an idle connection or a slow sender
holds nobody up and is dropped past its time: the opening line within
``OPENING_TIMEOUT`` of connecting (a client sends it at once), the whole request within
``REQUEST_TIMEOUT`` of READY. Time the server spends running a request counts for
nobody. At most ``MAX_WAITING`` connections are told READY and not yet answered: a
caller past those gets no READY within its half second and works alone, as it would
beside a busy server. Requests themselves run one at a time, in :mod:`xbrain.server`,
in the order they were complete; see :mod:`xbrain.serveclient` for the protocol.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import socket
import struct
import time

from .serveclient import MAGIC, MAX_MESSAGE, NOT_SERVED, READY

__all__ = ["Client", "Clients"]

OPENING_TIMEOUT = 1.0  # from connecting to the opening line (a client sends it at once)
REQUEST_TIMEOUT = 5.0  # from READY to the whole request
SEND_TIMEOUT = 10.0  # for the answer to be taken (a client waits ANSWER_TIMEOUT for it)
MAX_CLIENTS = 64  # connections held at once; more wait in the listen backlog
MAX_WAITING = 16  # told READY and not answered yet


class Client:
    """One connection: its stage (``opening`` until the opening line; ``queued`` for a
    READY; ``request`` until the client's side closes; ``other``: another protocol's
    request, read whole to be told so; ``complete``), what it sent, until when."""

    def __init__(self, conn: socket.socket, deadline: float) -> None:
        self.conn = conn
        self.stage = "opening"
        self.chunks: list[bytes] = []
        self.size = 0
        self.deadline = deadline

    def data(self) -> bytes:
        """What the client sent (after its opening line)."""
        return b"".join(self.chunks)


class Clients:
    """Every connection at once, none waiting on another (a selector): an idle one or a
    slow sender holds nobody up, and is dropped past its time. Requests themselves run
    one at a time, in the order they were complete."""

    def __init__(self, listener: socket.socket) -> None:
        self.listener = listener
        listener.setblocking(False)
        self.selector = selectors.DefaultSelector()
        self.selector.register(listener, selectors.EVENT_READ)
        self.accepting = True
        self.open: list[Client] = []
        self.served = 0

    def step(self) -> bool:
        """Take in what arrived (at most half a second's wait, none when a request is
        complete), tell waiting clients READY, drop those past their time; whether any
        connection changed."""
        complete = any(client.stage == "complete" for client in self.open)
        changed = False
        for key, _ in self.selector.select(0 if complete else 0.5):
            changed = True
            if key.fileobj is self.listener:
                self._accept()
            else:
                self._read(key.data)
        now = time.monotonic()
        waiting = sum(client.stage in ("request", "complete") for client in self.open)
        for client in list(self.open):
            if client.stage == "queued" and waiting < MAX_WAITING:
                try:
                    client.conn.send(READY)
                except OSError:
                    self._drop(client)  # it gave up: it sent nothing more
                    continue
                client.stage, client.deadline = "request", now + REQUEST_TIMEOUT
                waiting += 1
            elif client.stage != "complete" and now > client.deadline:
                self._drop(client)
                changed = True
        if not self.accepting and len(self.open) < MAX_CLIENTS:
            self.selector.register(self.listener, selectors.EVENT_READ)
            self.accepting = True
        return changed

    def _accept(self) -> None:
        while len(self.open) < MAX_CLIENTS:
            try:
                conn, _ = self.listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError:  # out of descriptors, say: the backlog keeps it
                return
            if not _peer_is_us(conn):
                conn.close()
                continue
            conn.setblocking(False)
            client = Client(conn, time.monotonic() + OPENING_TIMEOUT)
            self.open.append(client)
            self.selector.register(conn, selectors.EVENT_READ, client)
        self.selector.unregister(self.listener)  # full: the backlog holds the rest
        self.accepting = False

    def _read(self, client: Client) -> None:
        want = len(MAGIC) + 1 - client.size if client.stage == "opening" else 1 << 16
        try:
            chunk = client.conn.recv(want)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            chunk = b""
            if client.stage != "other":
                return self._drop(client)
        client.chunks.append(chunk)
        client.size += len(chunk)
        if client.size > MAX_MESSAGE:  # refused whole, never run truncated
            return self._drop(client)
        if client.stage == "opening" and (not chunk or client.size == len(MAGIC) + 1):
            opening = client.data()
            client.chunks, client.size = [], 0
            if opening == MAGIC + b"\n":
                client.stage = "queued"  # READY once a place is free
            elif opening[:2] == MAGIC[:2]:  # a client of another version: it does the work
                client.stage, client.chunks, client.size = "other", [opening], len(opening)
            else:
                return self._drop(client)
        if chunk:
            return None
        if client.stage == "request" and client.size:
            client.stage = "complete"
            self.selector.unregister(client.conn)
        elif client.stage == "other":
            self._other(client)
        else:
            self._drop(client)  # gone before READY, or READY and nothing: it gave up
        return None

    def _other(self, client: Client) -> None:
        with contextlib.suppress(OSError):
            client.conn.setblocking(True)
            client.conn.settimeout(SEND_TIMEOUT)
            client.conn.sendall(f"{NOT_SERVED}\nAnother xbrain serve protocol.\n".encode())
        self._drop(client)

    def next_request(self) -> Client | None:
        """The first complete request, if any."""
        return next((client for client in self.open if client.stage == "complete"), None)

    def answer(self, client: Client, answer: bytes | None) -> None:
        """Send ``answer`` (None: none; the connection is closed either way)."""
        if answer is not None:
            self.served += 1
            with contextlib.suppress(OSError):
                client.conn.setblocking(True)
                client.conn.settimeout(SEND_TIMEOUT)
                client.conn.sendall(answer)
        self._drop(client)

    def postpone(self, seconds: float) -> None:
        """Move every deadline on by ``seconds`` (the time a request took to run)."""
        for client in self.open:
            client.deadline += seconds

    def _drop(self, client: Client) -> None:
        with contextlib.suppress(KeyError, ValueError):
            self.selector.unregister(client.conn)
        client.conn.close()
        with contextlib.suppress(ValueError):
            self.open.remove(client)

    def close(self) -> None:
        """Close every connection: a complete request is told NOT_SERVED (the caller does
        it, a write included: nothing of it ran), the rest just closed."""
        for client in list(self.open):
            if client.stage == "complete":
                self.answer(client, f"{NOT_SERVED}\nThe server stopped.\n".encode())
                self.served -= 1
            else:
                self._drop(client)
        self.selector.close()
        self.listener.close()


def _peer_is_us(conn: socket.socket) -> bool:
    """The connecting process runs as this user (Linux: SO_PEERCRED)."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return True  # the 0700 directory and 0600 socket already keep others out
    creds = conn.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i"))
    _, uid, _ = struct.unpack("3i", creds)
    return bool(uid == os.getuid())
