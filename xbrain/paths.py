"""Which path names xbrain will ever write in a working tree (a leaf: no xbrain imports).

Trees from outside (a remote, a clone) are hostile until checked. A component must be a
plain name: not empty, not ``.`` or ``..``, no slash, backslash, NUL or control
character, valid UTF-8, and nothing git itself refuses to check out on any platform —
``.git`` in any case, also spelled with characters HFS+ ignores or with the trailing
dots and spaces NTFS drops, and its 8.3 short name ``git~1``. This is git's own
``verify_path`` rule, applied to every platform at once because a store travels.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["component_problem", "git_own_name", "path_problem", "same_file_key"]

# Code points HFS+ ignores when comparing names (git's is_hfs_dotgit list).
_HFS_IGNORABLE = dict.fromkeys(
    [*range(0x200C, 0x2010), *range(0x202A, 0x202F), *range(0x206A, 0x2070), 0xFEFF]
)
MAX_COMPONENT = 255
_CONTROL = re.compile("[\x00-\x1f\x7f]")


def component_problem(name: bytes) -> str | None:
    """Why one path component is unsafe, or None when it is a plain name."""
    if not name:
        return "an empty name"
    if len(name) > MAX_COMPONENT:
        return "a name longer than 255 bytes"
    try:
        text = name.decode("utf-8")
    except UnicodeDecodeError:
        return "not valid UTF-8"
    if text in (".", ".."):
        return f"the special name {text!r}"
    if _CONTROL.search(text):
        return "a name with a control character"
    if "/" in text or "\\" in text:
        return "a name with a slash or backslash"
    if ":" in text:
        return "a name with a colon (an NTFS stream)"
    folded = same_file_key(text)
    bare = folded.rstrip(". ")
    if bare in (".git", "git~1"):
        return "git's own directory"
    if folded.startswith(".git"):
        return "a name starting with .git (kept for git's own files, such as .gitattributes)"
    return None


def same_file_key(name: str) -> str:
    """``name`` as the most lenient file system compares it (HFS+'s ignored characters,
    Unicode normal form, letter case): two names with one key are one file there."""
    if name.isascii():  # no ignorable character, already NFC, and casefold is lower
        return name.lower()
    return unicodedata.normalize("NFC", name.translate(_HFS_IGNORABLE)).casefold()


def git_own_name(name: str) -> bool:
    """A name git keeps for itself (``.git``, ``.gitignore``, ``.gitattributes``, …, in
    any spelling a file system takes for it): in a skill folder or repository these are
    how it is kept, not part of the skill."""
    return same_file_key(name).startswith(".git")


def path_problem(path: str) -> str | None:
    """Why a relative POSIX path is unsafe to write under a store, or None."""
    if not path or path.startswith("/"):
        return "not a relative path"
    for part in path.split("/"):
        problem = component_problem(part.encode("utf-8", "surrogatepass"))
        if problem is not None:
            return problem
    return None
