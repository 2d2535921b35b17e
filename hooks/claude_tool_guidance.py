#!/usr/bin/env python3
"""Claude Code ``PreToolUse`` hook: the user's tool-guidance for the tool about to run.

Hands the hook payload (tool name and input) to ``xbrain recall - --only
tool-guidance``; a matching entry (for example "before ``git push``, run the tests") is
added as ``hookSpecificOutput.additionalContext`` — shown in full the first time in a
session, then as its one-liner. It never blocks or changes the tool call, and never
fails it: any problem means no output and exit 0.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from claude_recall import block, recall_results

HEADER = "xbrain tool guidance (the user's saved notes for this tool):"


def main() -> int:
    def ask(payload: dict) -> dict | None:
        import json

        tool = str(payload.get("tool_name") or "")
        if not tool:
            return None
        given = json.dumps(payload.get("tool_input") or {}, ensure_ascii=False)[:4000]
        asked = {key: payload.get(key) for key in ("session_id", "cwd")}
        asked.update(hook_event_name="PreToolUse", prompt=f"{tool} {given}")
        return asked

    results = recall_results(["--only", "tool-guidance", "--budget", "2000"], ask)
    try:
        lines = [block(result) for result in results or []]
    except (KeyError, TypeError):
        return 0
    if not lines:
        return 0
    import json

    context = "\n".join([HEADER, *lines])
    output = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": context}}
    sys.stdout.write(json.dumps(output, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
