"""A Claude Code transcript (JSON lines) read from its end: the messages of one role.

Only the last 256 KiB is read, and only from a regular file (a FIFO or any other
non-file is never opened for reading past its mode), so a hook stays bounded whatever
the payload's ``transcript_path`` names.
"""

from __future__ import annotations

import json
import os
import stat

__all__ = ["TAIL", "messages"]

TAIL = 256 * 1024  # how much of a transcript's end is read


def messages(path: str, role: str, *, text_parts_only: bool = False) -> list[str]:
    """The texts of ``role``'s messages in the transcript's last ``TAIL`` bytes, oldest
    first. A message's list content gives its text parts (``text_parts_only``: only parts
    typed ``text``, so tool results are left out)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # a FIFO never blocks
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return []
    with os.fdopen(fd, "rb") as handle:
        handle.seek(max(0, handle.seek(0, os.SEEK_END) - TAIL))
        lines = handle.read(TAIL).decode("utf-8", "replace").splitlines()
    texts: list[str] = []
    for line in lines:
        try:
            item = json.loads(line)
        except (ValueError, RecursionError):
            continue
        message = item.get("message") if isinstance(item, dict) else None
        if not isinstance(message, dict) or message.get("role") != role:
            continue
        content = message.get("content")
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            parts = [
                c.get("text")
                for c in content
                if isinstance(c, dict) and (not text_parts_only or c.get("type") == "text")
            ]
            texts.append("\n".join(t for t in parts if isinstance(t, str)))
    return texts
