"""Where xbrain keeps what belongs to the user rather than to one store (a leaf: no
xbrain imports, and neither typing nor pathlib at import: a hook's recall loads it).

The compiled Chinese dictionary is one such file: built once per user (about a second
and 8 MB) and shared by every store, whether the CLI, the server or the Python API opens
the store.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["cache_dir", "user_dir"]


def cache_dir() -> Path:
    """Where compiled caches live: $XBRAIN_CACHE_DIR, else the user cache dir (a leading
    ``~`` read as the home folder: a hook's settings reach xbrain with no shell)."""
    from pathlib import Path

    return Path(os.path.expanduser(os.environ.get("XBRAIN_CACHE_DIR") or user_dir("cache")))


def user_dir(which: str) -> str:
    """platformdirs' user data or cache dir for xbrain. On Linux it is the XDG rule
    (platformdirs costs ≈ 10 ms to import, a tenth of a recall), tested to agree."""
    if sys.platform.startswith("linux"):
        name, fallback = ("XDG_DATA_HOME", "~/.local/share")
        if which == "cache":
            name, fallback = ("XDG_CACHE_HOME", "~/.cache")
        base = os.environ.get(name, "")  # used only when absolute, as platformdirs does
        root = base if os.path.isabs(base) else os.path.expanduser(fallback)
        return os.path.join(root, "xbrain")
    import platformdirs

    finder = platformdirs.user_cache_dir if which == "cache" else platformdirs.user_data_dir
    return str(finder("xbrain", appauthor=False))
