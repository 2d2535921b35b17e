"""Provider configs (``--provider-config FILE``): validation and identity keys.

Rules and messages follow the original (reference §6.1): at most 16,000 characters,
``scope: personal`` only, ``kind: file`` with an absolute path that differs from the
local store, or ``kind: command`` with an absolute executable, 1–10 arguments and a
namespace. The provider key — the receipts bucket — is the original's digest of the
config identity, byte for byte. Beyond the original, credentials never live in a config:
secret-named keys, ``--token=…``-style arguments and URLs with credentials or secret
parameters are rejected.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..codec import digest
from ..credentials import reject_credentials
from ..errors import InvalidInputError, NotFoundError
from ..inputs import parse_json, read_file

__all__ = ["ProviderConfig", "load_provider_config"]

MAX_CHARS = 16_000
_NAMESPACE = re.compile(r"[a-zA-Z0-9_-]{1,100}", re.ASCII)
SCOPE_ERROR = (
    "Provider config must explicitly select scope: personal. Shared memory is not supported."
)
COMMAND_ERROR = (
    "Expected file provider or an absolute trusted command, personal scope and namespace."
)


@dataclass(frozen=True)
class ProviderConfig:
    """A validated provider selection."""

    kind: str
    key: str
    path: Path | None = None
    command: tuple[str, ...] = ()
    namespace: str = ""
    timeout: float = 15.0


def canonical_path(path: Path) -> Path:
    """realpath, and for a missing path its parent's realpath plus the name (recursively)."""
    path = Path(os.path.abspath(path))
    if path.exists():
        return Path(os.path.realpath(path))
    if path.parent == path:
        return path
    return canonical_path(path.parent) / path.name


def load_provider_config(file: Path, store_path: Path) -> ProviderConfig:
    """Read and validate ``file``; ``store_path`` is the local store (the differ rule)."""
    try:  # 16,000 characters are at most 64,000 UTF-8 bytes
        data = read_file(Path(file), 4 * MAX_CHARS, "Provider config exceeds 16 KiB.")
    except NotFoundError:
        raise NotFoundError(f"No such provider config: {file}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInputError("Invalid provider config JSON.") from None
    if len(text) > MAX_CHARS:
        raise InvalidInputError("Provider config exceeds 16 KiB.")
    raw = parse_json(text, "Invalid provider config JSON.")
    if not isinstance(raw, dict) or raw.get("scope") != "personal":
        raise InvalidInputError(SCOPE_ERROR)
    reject_credentials(raw, "Provider configs")
    if raw.get("kind") == "file":
        path = raw.get("path")
        if not isinstance(path, str) or not os.path.isabs(path):
            raise InvalidInputError("File provider requires an absolute path.")
        target = canonical_path(Path(path))
        if target == canonical_path(store_path):
            raise InvalidInputError("Provider path must differ from the local resource store.")
        key = digest({"kind": "file", "path": str(target), "scope": "personal"})
        return ProviderConfig("file", key, path=target)
    command = raw.get("command")
    namespace = raw.get("namespace")
    if (
        raw.get("kind") != "command"
        or not isinstance(command, list)
        or not 1 <= len(command) <= 10
        or not all(isinstance(arg, str) and len(arg) < 4096 for arg in command)
        or not os.path.isabs(command[0])
        or not isinstance(namespace, str)
        or not _NAMESPACE.fullmatch(namespace)
    ):
        raise InvalidInputError(COMMAND_ERROR)
    timeout_ms = raw.get("timeoutMs", 15_000)
    if (
        isinstance(timeout_ms, bool)
        or not isinstance(timeout_ms, int)
        or not (1000 <= timeout_ms <= 15_000)
    ):
        raise InvalidInputError("Memory adapter timeoutMs must be 1,000–15,000.")
    key = digest(
        {"kind": "command", "command": command, "namespace": namespace, "scope": "personal"}
    )
    return ProviderConfig(
        "command", key, command=tuple(command), namespace=namespace, timeout=timeout_ms / 1000
    )
