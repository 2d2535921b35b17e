"""The skill index's whole build (issue 45 item 4: 1,000 skills ≤ 0.5 s), as ``xbrain
reindex`` runs it, shared with a helper process, and serially (one core) beside it.

Each run rebuilds the skill index of the store in this process (the segmenter and the
repository already open, as in ``reindex``), after a ``python -c pass`` timed just
before it. ``bench/run.py`` adds these rows to its skills section (1,000 skills beside
10,000 resources); alone: ``python bench/skill_build.py STORE [--runs 7]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import Row, Samples, floor_once


def skill_build_rows(store: Path, runs: int) -> list[Row]:
    """Shared and serial build times of the skill index of ``store``."""
    from xbrain.core import Core, View
    from xbrain.search import skilldoc
    from xbrain.search.skills import reindex_skills

    cache = os.environ.get("XBRAIN_CACHE_DIR")
    core = Core(store, cache_dir=Path(cache) if cache else None)
    shared, serial = Samples(), Samples()
    shared.floors, serial.floors = [], []
    least = skilldoc.PARALLEL_MIN
    count = 0
    with core.locked(), core.git() as git:
        reindex_skills(git, core.cache_dir, View(git.snapshot()))  # warm: pages, segmenter
        try:
            for _ in range(runs):
                for samples, bound in ((shared, least), (serial, 10**9)):
                    skilldoc.PARALLEL_MIN = bound
                    samples.floors.append(floor_once())
                    started = time.perf_counter()
                    count = reindex_skills(git, core.cache_dir, View(git.snapshot()))
                    samples.append((time.perf_counter() - started) * 1000)
        finally:
            skilldoc.PARALLEL_MIN = least
    return [
        (f"reindex {count:,} skills (skill index)", shared, "≤ 500 ms"),
        ("  the same on one core", serial, ""),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("store", type=Path)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    from run import print_table

    rows = skill_build_rows(args.store, args.runs)
    floors = [f for _, samples, _ in rows for f in getattr(samples, "floors", [])]
    print_table(args.runs, [("python -c pass (floor)", floors, ""), *rows], [])


if __name__ == "__main__":
    main()
