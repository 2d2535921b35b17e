"""The ``Stop`` hook's ``session-learning`` ask (issue 46): once per session, and only
when the user corrected the agent in it, ask the agent to propose what it learned as a
``session-learning`` entry for review.

Off unless ``xbrain config review.sessionLearning on``. A correction is a message the
user typed (not a tool result) that opens like one ("no,", "that's wrong", "actually",
"I said", "不对", …), in the transcript's last 256 KiB. "Asked" is kept in the
session's recall state, so a session is asked once even across processes.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .session import SESSION_ID, session_state

__all__ = ["ask", "corrections"]

CORRECTION = re.compile(
    r"\s*(?:no\b[,.!]?|nope\b|wrong\b|that(?:'s| is) (?:not|wrong|incorrect)\b|"
    r"not (?:that|what|like)\b|don'?t\b|do not\b|stop\b|actually\b|instead\b|"
    r"i (?:said|meant|told you)\b|you (?:forgot|missed|broke)\b|"
    r"不对|错了|不是|不要|别)",
    re.IGNORECASE,
)
ASK = (
    "Before you stop: the user corrected you in this session. If you learned something "
    "that will hold in later sessions (a preference, a fact, a rule), propose it for the "
    'user\'s review, one entry each: `xbrain entry put -` with JSON {{"kind": '
    '"session-learning", "name": "<short title>", "body": "<what to do or know>", '
    '"queries": ["<a prompt that needs it>"], "status": "proposed", "proposedBy": '
    '{{"agent": "claude-code", "session": "{session}"}}}}. It is not used until the user '
    "accepts it (`xbrain review`). If nothing is worth keeping, just stop."
)


def _user_texts(path: str) -> list[str]:
    """The texts the user typed (tool results are the tools', not the user's)."""
    from ..transcript import messages

    return [text for text in messages(path, "user", text_parts_only=True) if text]


def corrections(path: str) -> int:
    """How many of the user's messages in the transcript at ``path`` correct the agent."""
    return sum(1 for text in _user_texts(path) if CORRECTION.match(text))


def _enabled(store_dir: Path) -> bool:
    from ..core import Core

    with Core(store_dir).reading() as view:
        return view is not None and view.config().review_setting("sessionLearning") == "on"


def ask(store_dir: Path, payload: dict[str, Any]) -> str | None:
    """The Stop hook's reason to hold the agent once and ask for its learnings, or None:
    off, no session, no corrections, or asked already in this session."""
    session, transcript = payload.get("session_id"), payload.get("transcript_path")
    if not isinstance(session, str) or not SESSION_ID.fullmatch(session):
        return None  # the id goes into the text the agent reads: a plain one only
    if not isinstance(transcript, str) or not corrections(transcript):
        return None
    if not _enabled(store_dir):
        return None
    with session_state(store_dir / ".git", session) as state:
        if state.get("learningAsked"):
            return None
        state["learningAsked"] = True
    return ASK.format(session=session)
