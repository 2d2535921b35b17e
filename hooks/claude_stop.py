#!/usr/bin/env python3
"""Claude Code ``Stop`` hook: a matching stop-rule keeps the agent from stopping.

Reads the end of the session's transcript (at most the last 256 KiB), takes the agent's
last message, and asks ``xbrain recall - --only stop-rule`` whether one of the user's
stop-rules matches it (for example "do not finish while tests fail"). If one does, it
answers ``{"decision": "block", "reason": <the rule>}`` so the agent goes on with the
rule in front of it. It blocks at most once in a row (``stop_hook_active``), and never
fails the stop: any problem means no output and exit 0.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from claude_recall import recall_results

TAIL = 256 * 1024


def last_message(path: str) -> str:
    """The text of the last assistant message in a Claude Code transcript (JSON lines)."""
    import json
    import stat

    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # a FIFO never blocks
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return ""
    with os.fdopen(fd, "rb") as handle:
        handle.seek(0, os.SEEK_END)
        size = handle.tell()
        handle.seek(max(0, size - TAIL))
        lines = handle.read().decode("utf-8", "replace").splitlines()
    for line in reversed(lines):
        try:
            item = json.loads(line)
        except ValueError:
            continue
        message = item.get("message") if isinstance(item, dict) else None
        if not isinstance(message, dict) or message.get("role") != "assistant":
            continue
        content = message.get("content")
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            texts = [c.get("text", "") for c in content if isinstance(c, dict)]
            return "\n".join(t for t in texts if isinstance(t, str))
    return ""


def main() -> int:
    def ask(payload: dict) -> dict | None:
        if payload.get("stop_hook_active"):
            return None  # this stop was already held once: let it end
        transcript = payload.get("transcript_path")
        text = last_message(transcript)[-8000:] if isinstance(transcript, str) else ""
        if not text.strip():
            return None
        return {"cwd": payload.get("cwd"), "hook_event_name": "Stop", "prompt": text}

    results = recall_results(["--only", "stop-rule", "--budget", "4000"], ask)
    if not results:
        return 0
    try:
        reason = "\n\n".join(f"{r['name']}: {r['text']}" for r in results)
    except (KeyError, TypeError):
        return 0
    import json

    sys.stdout.write(json.dumps({"decision": "block", "reason": reason}, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
