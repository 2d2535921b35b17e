"""Running a trusted adapter process: one JSON request in, one JSON document out.

Shared by memory providers (``xstash.memory.v1``) and source adapters
(``xstash.source.v1``). No shell: the command runs directly, with the user's environment
and working directory. The request is one line on stdin, which is then closed. stdout
must be a single JSON document of at most 1 MiB; stderr is drained and dropped, never
shown. At the deadline the adapter's whole process group — children included — is
killed. Each failure has the caller's own one-line message.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from typing import Any

from .codec import canonical_json
from .errors import InvalidInputError, ProviderError
from .inputs import parse_json

__all__ = ["Messages", "run_adapter"]

MAX_OUTPUT = 1024 * 1024


@dataclass(frozen=True)
class Messages:
    """The one-line errors of one kind of adapter."""

    start: str
    stdin: str
    size: str
    timeout: str
    failed: str
    json: str


def run_adapter(
    command: tuple[str, ...], request: dict[str, Any], timeout: float, messages: Messages
) -> Any:
    """Run ``command`` once with ``request``; the parsed reply, or ProviderError."""
    line = canonical_json(request).encode() + b"\n"
    try:
        process = subprocess.Popen(
            list(command),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # its own process group: the deadline kills children too
        )
    except OSError:
        raise ProviderError(messages.start) from None
    chunks: list[bytes] = []
    size = [0]
    overflow = threading.Event()

    def read_stdout() -> None:
        assert process.stdout is not None
        with contextlib.suppress(OSError, ValueError):
            while chunk := os.read(process.stdout.fileno(), 65536):
                size[0] += len(chunk)
                if size[0] > MAX_OUTPUT:
                    overflow.set()
                    return
                chunks.append(chunk)

    def drain_stderr() -> None:  # read and dropped: adapters' diagnostics stay private
        assert process.stderr is not None
        with contextlib.suppress(OSError, ValueError):
            while os.read(process.stderr.fileno(), 65536):
                pass

    write_failed = threading.Event()

    def write_stdin() -> None:  # in a thread: an adapter that never reads cannot stall us
        assert process.stdin is not None
        try:
            process.stdin.write(line)
            process.stdin.close()
        except (OSError, ValueError):
            write_failed.set()

    threads = [
        threading.Thread(target=f, daemon=True) for f in (read_stdout, drain_stderr, write_stdin)
    ]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + timeout  # covers the whole exchange, the request included
    try:
        while (threads[0].is_alive() or threads[2].is_alive()) and not overflow.is_set():
            if time.monotonic() > deadline:
                raise ProviderError(messages.timeout)
            threads[0].join(0.02)
        if overflow.is_set():
            raise ProviderError(messages.size)
        if write_failed.is_set():
            raise ProviderError(messages.stdin)
        try:
            code = process.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            raise ProviderError(messages.timeout) from None
    finally:
        _kill_group(process)
        for thread in threads:  # the pipes reach EOF once the group is gone
            thread.join(1.0)
        for stream in (process.stdout, process.stderr, process.stdin):
            if stream is not None:
                with contextlib.suppress(OSError, ValueError):
                    stream.close()
    if code != 0:
        raise ProviderError(messages.failed)
    try:
        return parse_json(b"".join(chunks), messages.json)
    except InvalidInputError:
        raise ProviderError(messages.json) from None


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    """Kill the adapter and anything it started (its own process group)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()
