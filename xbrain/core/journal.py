"""The history journal: one line per commit xbrain makes, naming the ids it touched.

Appending a line costs nothing on the write path; ``log`` reads the journal instead of
diffing trees, so it never walks history xbrain wrote itself. It is a hint, not a truth:
a commit missing from it (made by git, fetched, or lost in a crash) is simply diffed.
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["JOURNAL_FILE", "note", "read"]

JOURNAL_FILE = "history.journal"
_ID = re.compile(r"[a-z]{1,16}_[a-f0-9]{64}", re.ASCII)  # any record kind's id
_COMMIT = re.compile(r"[0-9a-f]{40}", re.ASCII)


def rids_of(paths: list[str]) -> set[str]:
    """Record ids named by record file paths."""
    return {Path(p).stem for p in paths if p.endswith(".yaml") and _ID.fullmatch(Path(p).stem)}


def note(control_dir: Path, commit: str, paths: list[str]) -> None:
    """Append ``commit`` and the ids its ``paths`` touched."""
    directory = control_dir / "xbrain"
    directory.mkdir(exist_ok=True)
    with open(directory / JOURNAL_FILE, "a", encoding="ascii") as handle:
        handle.write(" ".join([commit, *sorted(rids_of(paths))]) + "\n")


def read(control_dir: Path) -> dict[str, set[str]]:
    """commit → ids, for every well-formed line."""
    try:
        text = (control_dir / "xbrain" / JOURNAL_FILE).read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError):
        return {}
    out: dict[str, set[str]] = {}
    for line in text.splitlines():
        commit, *rids = line.split(" ")
        if _COMMIT.fullmatch(commit) and all(_ID.fullmatch(rid) for rid in rids):
            out[commit] = set(rids)
    return out
