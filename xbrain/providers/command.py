"""The command adapter: one trusted process per operation, ``xstash.memory.v1`` JSON.

No shell: ``command`` is executed directly. One JSON request goes to stdin, which is then
closed; stdout must hold exactly one JSON document of at most 1 MiB; stderr is drained
and thrown away, never shown. After the timeout the adapter's whole process group is
killed (children included). Only a reply with ``ok: true`` that echoes the exact id and
revision confirms anything.
"""

from __future__ import annotations

from typing import Any

from ..adapters import Messages, run_adapter
from ..errors import ProviderError
from ..kinds.model import Resource, normalize_resource

__all__ = ["CommandProvider"]

PROTOCOL = "xstash.memory.v1"
MAX_RESULTS = 50
MESSAGES = Messages(
    start="Memory adapter could not start.",
    stdin="Memory adapter closed its input.",
    size="Memory adapter response exceeds 1 MiB.",
    timeout="Memory adapter timed out; sync not confirmed.",
    failed="Memory adapter failed; sync not confirmed.",
    json="Memory adapter returned invalid JSON.",
)


class CommandProvider:
    """A trusted local adapter process (``kind: command``)."""

    kind = "command"

    def __init__(self, key: str, command: tuple[str, ...], namespace: str, timeout: float) -> None:
        self.key = key
        self.command = command
        self.namespace = namespace
        self.timeout = timeout

    def _run(self, payload: dict[str, Any]) -> dict[str, Any]:
        request = {"protocol": PROTOCOL, "namespace": self.namespace, **payload}
        reply = run_adapter(self.command, request, self.timeout, MESSAGES)
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
