"""The real git binary run as an attacker with push access would run it (one identity,
the caller's environment otherwise), for the hostile-remote tests."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

GIT_ENV = {
    "GIT_AUTHOR_NAME": "mallory",
    "GIT_AUTHOR_EMAIL": "m@example.invalid",
    "GIT_COMMITTER_NAME": "mallory",
    "GIT_COMMITTER_EMAIL": "m@example.invalid",
}


def git(repo: Path, *args: str, input: str | None = None) -> str:
    """``git -C repo ARGS`` as mallory; its stdout, stripped (a failure raises)."""
    return subprocess.run(
        ["git", "-C", str(repo), *args],
        input=input,
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, **GIT_ENV},
    ).stdout.strip()
