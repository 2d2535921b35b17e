"""Source adapters: config validation, the source key and ``xstash.source.v1`` pages.

Config rules, messages and the source key follow the original (reference §10.2–10.3).
The process contract is the memory adapters' (no shell, one JSON line in, one JSON
document out, at most 1 MiB, stderr never shown, process group killed at the deadline),
with ``timeoutMs`` from the config.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..adapters import Messages, run_adapter
from ..codec import digest
from ..credentials import reject_credentials
from ..errors import InvalidInputError, NotFoundError, ProviderError
from ..inputs import parse_json, read_file, whole_number
from ..kinds.model import normalize_resource
from ..text import utf16_length
from ..timestamps import parse_timestamp

__all__ = ["Page", "SourceConfig", "fetch", "load_source_config"]

PROTOCOL = "xstash.source.v1"
MAX_ITEMS = 100
SELECT_ERROR = (
    "Select a personal source, account and real pagination/incremental capabilities explicitly."
)
_PROVIDER = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}", re.ASCII)
CODES = ("authorization_required", "access_denied", "rate_limited", "cursor_expired", "unavailable")
MESSAGES = Messages(
    start="Source adapter could not start.",
    stdin="Source adapter closed its input.",
    size="Source adapter response exceeds 1 MiB.",
    timeout="Source adapter timed out; page not committed.",
    failed="Source adapter failed; inspect its private diagnostics.",
    json="Source adapter returned invalid JSON.",
)


@dataclass(frozen=True)
class SourceConfig:
    """A validated, user-selected source."""

    key: str
    command: tuple[str, ...]
    provider: str
    account: str
    pagination: str
    incremental: str
    timeout: float


@dataclass(frozen=True)
class Page:
    """One validated page: normalized items and continuation."""

    items: list[dict[str, Any]]
    next_cursor: str | None
    checkpoint: str | None
    coverage: str


def load_source_config(file: Path) -> SourceConfig:
    """Read and validate a source config."""
    try:
        data = read_file(Path(file), 16_000, "Source config exceeds 16 KiB.")
    except NotFoundError:
        raise NotFoundError(f"No such source config: {file}") from None
    raw = parse_json(data, "Invalid source config JSON.")
    account = raw.get("account") if isinstance(raw, dict) else None
    if (
        not isinstance(raw, dict)
        or raw.get("kind") != "command"
        or raw.get("scope") != "personal"
        or not isinstance(raw.get("provider"), str)
        or not _PROVIDER.fullmatch(raw["provider"])
        or not isinstance(account, str)
        or not account.strip()
        or len(account) > 200
        or raw.get("pagination") not in ("cursor", "single")
        or raw.get("incremental") not in ("checkpoint", "rescan")
    ):
        raise InvalidInputError(SELECT_ERROR)
    timeout = raw.get("timeoutMs", 15_000)
    whole_number(timeout, 1000, 60_000, "Source timeoutMs must be 1,000–60,000.")
    command = raw.get("command")
    if (
        not isinstance(command, list)
        or not 1 <= len(command) <= 10
        or not all(isinstance(arg, str) and len(arg) < 4096 for arg in command)
        or not os.path.isabs(command[0])
    ):
        raise InvalidInputError("Adapter command must name an absolute trusted executable.")
    reject_credentials(raw, "Source configs")  # the same no-credentials rule
    key = digest(
        {
            "command": command,
            "provider": raw["provider"],
            "account": account,
            "pagination": raw["pagination"],
            "incremental": raw["incremental"],
            "scope": "personal",
        }
    )
    return SourceConfig(
        key,
        tuple(command),
        raw["provider"],
        account,
        raw["pagination"],
        raw["incremental"],
        timeout / 1000,
    )


def _continuation(reply: dict[str, Any], name: str) -> str | None:
    if name not in reply:
        raise ProviderError("Invalid source continuation/checkpoint.")
    value = reply[name]
    if value is None:
        return None
    if not isinstance(value, str) or not 1 <= utf16_length(value) <= 4096:
        raise ProviderError("Invalid source continuation/checkpoint.")
    return value


def _item(raw: Any, provider: str) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise ProviderError("Invalid source item.")
    resource = normalize_resource(
        {
            "source": {"provider": provider, "id": raw.get("id"), "url": raw.get("url")},
            "title": raw.get("title"),
            "text": raw.get("text"),
            "summary": "",
            "purpose": "",
            "useWhen": [],
            "limitations": [],
            "savedReason": None,
            "updatedAt": "1970-01-01T00:00:00Z",
        }
    ).resource
    if "updatedAt" not in raw:
        raise InvalidInputError("Invalid updatedAt; use an ISO timestamp.")
    updated = raw["updatedAt"]
    return {
        "id": resource["source"]["id"],
        "url": resource["source"]["url"],
        "title": resource["title"],
        "text": resource["text"],
        "updatedAt": None if updated is None else parse_timestamp(updated),
    }


def fetch(source: SourceConfig, cursor: str | None, checkpoint: str | None) -> Page:
    """One page from the adapter, validated as the original does."""
    request = {
        "operation": "fetch",
        "provider": source.provider,
        "account": source.account,
        "cursor": cursor,
        "checkpoint": checkpoint,
        "limit": MAX_ITEMS,
        "protocol": PROTOCOL,
    }
    reply = run_adapter(source.command, request, source.timeout, MESSAGES)
    if not isinstance(reply, dict) or reply.get("protocol") != PROTOCOL:
        raise ProviderError("Invalid source adapter protocol.")
    if reply.get("ok") is not True:
        code = reply.get("code") if reply.get("code") in CODES else "failed"
        raise ProviderError(
            f"Source fetch blocked: {code}. No fallback source/account was selected."
        )
    if reply.get("provider") != source.provider or reply.get("account") != source.account:
        raise ProviderError("Source/account mismatch; page not committed.")
    items = reply.get("items")
    if (
        not isinstance(items, list)
        or len(items) > MAX_ITEMS
        or reply.get("coverage") not in ("partial", "full")
    ):
        raise ProviderError("Invalid source page.")
    next_cursor = _continuation(reply, "nextCursor")
    page_checkpoint = _continuation(reply, "checkpoint")
    if source.pagination == "single" and next_cursor is not None:
        raise ProviderError(
            "Source does not support pagination; do not invent continuation parameters."
        )
    if source.incremental == "rescan" and page_checkpoint is not None:
        raise ProviderError("Rescan source cannot return an incremental checkpoint.")
    if source.incremental == "checkpoint" and next_cursor is None and page_checkpoint is None:
        raise ProviderError("Incremental source must confirm a checkpoint on its final page.")
    return Page(
        [_item(item, source.provider) for item in items],
        next_cursor,
        page_checkpoint,
        reply["coverage"],
    )
