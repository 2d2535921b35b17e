"""``python -m xbrain.git.upkeep STORE [FD]``: a pack merge, detached from the write.

Started by ``Packs.keep_packs`` when the merge a write calls for is too large to run
inside it, with the upkeep lock handed over as ``FD``; without ``FD`` it takes the lock
itself (and does nothing when another process holds it). It holds no store lock: a
merge only adds a pack, then removes what that pack holds (``packs``). Silent: any
failure leaves the packs as they were, for the next write's upkeep.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

from ..errors import XbrainError
from . import GitStore
from .objects import private_umask
from .upkeeplock import adopt, upkeep_lock

_NICE = 10  # added to the merge's niceness: it takes what the writes leave


def main(argv: list[str]) -> int:
    """Merge what the upkeep calls for in the store at ``argv[0]``; always 0. At a lower
    priority than the writes it runs beside (a batch wants both cores; a merge of many
    packs can take a core for tens of seconds)."""
    with contextlib.suppress(OSError, AttributeError):  # (no ``nice`` on this platform)
        os.nice(_NICE)
    store = Path(argv[0])
    with contextlib.suppress(OSError, XbrainError), private_umask(), GitStore(store) as git:
        if len(argv) > 1:
            adopt(int(argv[1]))
            git.upkeep(redo=argv[2:3] == ["redo"])
            return 0
        with upkeep_lock(git.control_dir, wait=False) as fd:
            if fd is not None:
                git.upkeep()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
