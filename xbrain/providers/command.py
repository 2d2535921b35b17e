"""The command adapter: one trusted process per operation, ``xstash.memory.v1`` JSON.

No shell: ``command`` is executed directly. One JSON request goes to stdin, which is then
closed; stdout must hold exactly one JSON document of at most 1 MiB; stderr is drained
and thrown away, never shown. After the timeout the adapter's whole process group is
killed (children included). Only a reply with ``ok: true`` that echoes the exact id and
revision confirms anything.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import threading
import time
from typing import Any

from ..codec import canonical_json
from ..errors import ProviderError
from ..model import Resource, normalize_resource

__all__ = ["CommandProvider"]

PROTOCOL = "xstash.memory.v1"
MAX_OUTPUT = 1024 * 1024
MAX_RESULTS = 50


class CommandProvider:
    """A trusted local adapter process (``kind: command``)."""

    kind = "command"

    def __init__(self, key: str, command: tuple[str, ...], namespace: str, timeout: float) -> None:
        self.key = key
        self.command = command
        self.namespace = namespace
        self.timeout = timeout

    def _run(self, payload: dict[str, Any]) -> dict[str, Any]:
        request = canonical_json({"protocol": PROTOCOL, "namespace": self.namespace, **payload})
        try:
            process = subprocess.Popen(
                list(self.command),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,  # its own process group: a timeout kills children too
            )
        except OSError:
            raise ProviderError("Memory adapter could not start.") from None
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

        readers = [threading.Thread(target=f, daemon=True) for f in (read_stdout, drain_stderr)]
        for reader in readers:
            reader.start()
        try:
            try:
                assert process.stdin is not None
                process.stdin.write(request.encode() + b"\n")
                process.stdin.close()
            except OSError:
                raise ProviderError("Memory adapter closed its input.") from None
            deadline = time.monotonic() + self.timeout
            while readers[0].is_alive() and not overflow.is_set():
                if time.monotonic() > deadline:
                    raise ProviderError("Memory adapter timed out; sync not confirmed.")
                readers[0].join(0.02)
            if overflow.is_set():
                raise ProviderError("Memory adapter response exceeds 1 MiB.")
            try:
                code = process.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                raise ProviderError("Memory adapter timed out; sync not confirmed.") from None
        finally:
            _kill_group(process)
            for reader in readers:  # the pipes reach EOF once the group is gone
                reader.join(1.0)
            for stream in (process.stdout, process.stderr, process.stdin):
                if stream is not None:
                    stream.close()
        if code != 0:
            raise ProviderError("Memory adapter failed; sync not confirmed.")
        try:
            reply = json.loads(b"".join(chunks).decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise ProviderError("Memory adapter returned invalid JSON.") from None
        if (
            not isinstance(reply, dict)
            or reply.get("protocol") != PROTOCOL
            or reply.get("ok") is not True
        ):
            raise ProviderError("Memory adapter did not confirm the operation.")
        return reply

    def _mutate(self, payload: dict[str, Any]) -> None:
        reply = self._run(payload)
        if reply.get("id") != payload["id"] or reply.get("revision") != payload["revision"]:
            raise ProviderError(
                "Memory adapter acknowledgement does not match the resource/revision."
            )

    def upsert(self, resource: Resource, revision: str) -> None:
        """Send one resource; returns only when the adapter confirmed exactly it."""
        self._mutate(
            {
                "operation": "upsert",
                "id": resource["id"],
                "revision": revision,
                "resource": resource,
            }
        )

    def delete(self, rid: str, revision: str) -> None:
        """Send one deletion (revision = the tombstone's digest)."""
        self._mutate({"operation": "delete", "id": rid, "revision": revision})

    def search(self, query: str, limit: int) -> list[Resource]:
        """Remote candidates: at most 50 valid resources with distinct ids."""
        reply = self._run({"operation": "search", "query": query, "limit": limit})
        found = reply.get("resources")
        if not isinstance(found, list) or len(found) > MAX_RESULTS:
            raise ProviderError("Invalid memory adapter search results.")
        resources = [normalize_resource(item).resource for item in found]
        if len({r["id"] for r in resources}) != len(resources):
            raise ProviderError("Duplicate memory adapter search results.")
        return resources


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    """Kill the adapter and anything it started (its own process group)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()
