"""What a recall is asked: a plain prompt or a Claude Code hook payload, and the
project it is asked in."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, NamedTuple

from ..errors import InvalidInputError, XbrainError
from ..inputs import read_file
from ..workdir import working_directory

__all__ = [
    "MAX_PROMPT",
    "Request",
    "payload_request",
    "project_folder",
    "project_id",
    "read_request",
]

MAX_PROMPT = 20_000
_EVENT = re.compile(r"[A-Za-z]{1,40}")


class Request(NamedTuple):
    """What a recall is asked: the prompt text and, from a hook, the session and event."""

    prompt: str
    session: str | None = None
    event: str | None = None
    cwd: str | None = None
    path: str | None = None  # the file a tool names (or --path): routes by entries' paths

    def changed(self, **fields: Any) -> Request:
        """A copy with ``fields`` replaced."""
        return self._replace(**fields)


def read_request(data: bytes) -> Request:
    """A plain prompt, or a Claude Code hook payload (JSON with ``prompt``, or with
    ``tool_name`` and ``tool_input`` for ``PreToolUse``)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInputError("The prompt is not UTF-8 text.") from None
    stripped = text.strip()
    if stripped.startswith("{"):
        try:
            payload = json.loads(stripped)
        except (ValueError, RecursionError):  # nesting too deep for the parser: text
            payload = None
        if isinstance(payload, dict) and ("prompt" in payload or "tool_name" in payload):
            return payload_request(payload)
    return Request(stripped[:MAX_PROMPT])


def payload_request(payload: dict[str, Any], prompt: str | None = None) -> Request:
    """The request a Claude Code hook payload makes: its ``prompt`` (or ``tool_name`` and
    ``tool_input``), unless ``prompt`` is given, with its session, event and cwd, and
    the file a tool that names one (``Edit``, ``Read``, …) is about to touch."""
    if prompt is None:
        prompt = payload.get("prompt")
    if not isinstance(prompt, str):
        tool = payload.get("tool_name", "")
        given = json.dumps(payload.get("tool_input", ""), ensure_ascii=False)[:4000]
        prompt = f"{tool} {given}"
    session = payload.get("session_id")
    event = payload.get("hook_event_name")
    cwd = payload.get("cwd")
    # the payload is outside input: the session id is checked where it names a file, an
    # event name is kept only if it looks like one (it reaches telemetry), a working
    # directory only if it is a plausible path
    return Request(
        prompt[:MAX_PROMPT],
        session if isinstance(session, str) else None,
        event if isinstance(event, str) and _EVENT.fullmatch(event) else None,
        cwd if isinstance(cwd, str) and 0 < len(cwd) <= 4096 and "\0" not in cwd else None,
        _tool_file(payload),
    )


def _tool_file(payload: dict[str, Any]) -> str | None:
    """The file the payload's tool names, when it is one of ``FILE_TOOLS`` (checked
    where it is used: ``pathroute.relative_file``)."""
    from .pathroute import FILE_TOOLS

    tool, given = payload.get("tool_name"), payload.get("tool_input")
    key = FILE_TOOLS.get(tool) if isinstance(tool, str) else None
    if key is None or not isinstance(given, dict):
        return None
    file = given.get(key)
    return file if isinstance(file, str) else None


def project_folder(cwd: str | None) -> Path:
    """The folder recall resolves a project from: ``cwd`` (a hook payload's), else the
    caller's working directory, normalized."""
    return Path(os.path.normpath(cwd or working_directory()))


def project_id(cwd: str | None, mapping: Any = None) -> str:
    """``project:<id>`` of a working directory: the id ``mapping`` (``xbrain config
    projects.FOLDER ID``) gives it or the nearest folder above it, else its git remote
    ``origin`` (host/path), else its path with ``/`` as ``-``; lowercased."""
    start = project_folder(cwd)
    if isinstance(mapping, dict) and mapping:
        for folder in [start, *start.parents]:
            pid = mapping.get(str(folder))
            if isinstance(pid, str):
                return "project:" + pid.lower()
    for folder in [start, *start.parents][:40]:
        config = _config(folder / ".git")
        if config is not None:
            url = _origin(config)
            if url:
                return "project:" + url
            break
    return "project:" + str(start).replace("/", "-").strip("-").lower()


def _config(dot: Path) -> Path | None:
    """The config file of the repository whose ``.git`` is ``dot``: in that folder (a
    checkout), or where a ``.git`` file's ``gitdir:`` points — a linked worktree shares
    the config of its main repository (named by the git dir's ``commondir``), a
    submodule has its own."""
    if _is_file(dot):
        gitdir = _pointer(dot, "gitdir:")
        if gitdir is None:
            return None
        common = _pointer(gitdir / "commondir", "")
        dot = gitdir / common if common is not None else gitdir
    config = dot / "config"
    return config if _is_file(config) else None


def _is_file(path: Path) -> bool:
    """``path.is_file()``, False where the name cannot even be looked up (too long)."""
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False


def _pointer(file: Path, prefix: str) -> Path | None:
    """The path a small git pointer file holds after ``prefix`` (relative to the file's
    folder), or None."""
    text = _head(file, 4096)
    if text is None or not text.startswith(prefix):
        return None
    target = text[len(prefix) :].strip()
    return file.parent / target if target and "\0" not in target else None


def _head(file: Path, size: int) -> str | None:
    """``file`` as text if it is a regular file of at most ``size`` bytes, else None: the
    folder is the caller's (a hook payload's ``cwd``), so a FIFO or a device there must
    not hold recall, nor a huge file fill memory."""
    try:
        data = read_file(file, size, "too large")
    except (XbrainError, ValueError):
        return None
    return data.decode("utf-8", errors="replace")


def _origin(config: Path) -> str | None:
    section = None
    text = _head(config, 1 << 20)
    if text is None:
        return None
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("["):
            section = line
        elif section == '[remote "origin"]' and line.startswith("url"):
            url = line.split("=", 1)[1].strip()
            for prefix in ("https://", "http://", "ssh://", "git://", "file://"):
                url = url.removeprefix(prefix)
            url = url.split("@", 1)[-1].replace(":", "/").removesuffix(".git").strip("/")
            return url.lower() or None
    return None
