#!/usr/bin/env python3
"""Claude Code ``PreToolUse`` hook through a script: ``xbrain hook claude-code`` answers it
(see claude_recall.py, which this calls, and hooks/README.md)."""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from claude_recall import relay

if __name__ == "__main__":
    sys.exit(relay())
