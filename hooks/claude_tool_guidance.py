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
from claude_recall import Search, block, cli_missing, note, xbrain_command

HEADER = "xbrain tool guidance (the user's saved notes for this tool):"


def main() -> int:
    child = None
    try:
        timeout = float(os.environ.get("XBRAIN_HOOK_TIMEOUT", "5"))
        argv = [*xbrain_command(), "recall", "-", "--only", "tool-guidance", "--budget", "2000"]
        missing = cli_missing(argv)
        if missing is not None:
            note(missing)
            return 0
        child = Search(argv)
        import json

        payload = json.loads(sys.stdin.read(1 << 20) or "{}")
        tool = str(payload.get("tool_name") or "")
        if not tool:
            return 0
        given = json.dumps(payload.get("tool_input") or {}, ensure_ascii=False)[:4000]
        asked = {key: payload.get(key) for key in ("session_id", "cwd")}
        asked.update(hook_event_name="PreToolUse", prompt=f"{tool} {given}")
        found, child = child.answer(json.dumps(asked), timeout), None
        if found is None:
            return 0
        lines = [block(result) for result in json.loads(found)["results"]]
        if not lines:
            return 0
        context = "\n".join([HEADER, *lines])
        output = {
            "hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": context}
        }
        sys.stdout.write(json.dumps(output, ensure_ascii=False))
    except Exception:  # never fail the tool call
        return 0
    finally:
        if child is not None:
            child.cancel()
    return 0


if __name__ == "__main__":
    sys.exit(main())
