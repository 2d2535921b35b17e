"""The skill index's whole build (issue 45 item 4: 1,000 skills ≤ 0.5 s), as ``xbrain
reindex`` runs it, shared with a helper process, and serially (one core) beside it.

Each run rebuilds the skill index of the store in this process (the segmenter and the
repository already open, as in ``reindex``), after a ``python -c pass`` timed just
before it. The row names how many skills the index holds of how many the store has:
only an active skill with a revision that is not ``proposed`` is offered, so a store
saved through the API without ``publish`` (proposed) times an index of none of them.
``bench/run.py`` adds these rows to its skills section (1,000 skills beside 10,000
resources, :func:`save_skills`); alone: ``python bench/skill_build.py STORE [--runs 7]``
(``--make N``: first save N such skills into STORE, a new store).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import Row, Samples, floor_once, man_resources

if TYPE_CHECKING:
    from xbrain.store import Store


def save_skills(store: Store, count: int) -> list[str]:
    """Save ``count`` skills made of manual pages into ``store`` (name, one-line
    description, a section as body), one commit each, as ``skill save`` does: the even
    ones published, the odd ones drafts (every one offered by the skill index); their
    names."""
    import io
    import json
    import re

    from xbrain.secretscan import scan_text

    pages: dict[str, dict[str, object]] = {}
    for item in man_resources(10_000, 4000):
        command = str(item["title"]).split(":", 1)[0]
        slug = re.sub(r"[^a-z0-9]+", "-", command.lower())[:50].strip("-")
        if scan_text(str(item["text"])[:4000]):  # an example credential in a man page
            continue
        if slug and slug not in pages and str(item["purpose"]).strip():
            pages[slug] = item
    names = []
    for i, (slug, item) in enumerate(list(pages.items())[:count]):
        name = f"{slug}-{i}"
        description = " ".join(str(item["purpose"]).split())[:1000]
        body = str(item["text"])[:4000]
        skill_md = f"---\nname: {name}\ndescription: {json.dumps(description)}\n---\n{body}\n"
        store.skill_save(io.BytesIO(skill_md.encode()), publish=i % 2 == 0)
        names.append(name)
    return names


def skill_build_rows(store: Path, runs: int) -> list[Row]:
    """Shared and serial build times of the skill index of ``store``."""
    from xbrain.core import Core, View
    from xbrain.search import skilldoc
    from xbrain.search.skills import reindex_skills

    cache = os.environ.get("XBRAIN_CACHE_DIR")
    core = Core(store, cache_dir=Path(cache) if cache else None)
    shared, serial = Samples(), Samples()
    shared.floors, serial.floors = [], []
    least, idle = skilldoc.PARALLEL_MIN, skilldoc.idle_core
    count = 0
    loads = []
    with core.locked(), core.git() as git:
        skills = len(View(git.snapshot()).children("skills"))
        reindex_skills(git, core.cache_dir, View(git.snapshot()))  # warm: pages, segmenter
        # the shared row shares whatever the load (reindex itself builds on one core when
        # the last minute's load leaves no core idle): the median load is in the next row
        skilldoc.idle_core = lambda: True
        try:
            for _ in range(runs):
                for samples, bound in ((shared, least), (serial, 10**9)):
                    skilldoc.PARALLEL_MIN = bound
                    samples.floors.append(floor_once())
                    loads.append(os.getloadavg()[0])
                    started = time.perf_counter()
                    count = reindex_skills(git, core.cache_dir, View(git.snapshot()))
                    samples.append((time.perf_counter() - started) * 1000)
        finally:
            skilldoc.PARALLEL_MIN, skilldoc.idle_core = least, idle
    load = sorted(loads)[len(loads) // 2]
    return [
        (f"reindex {count:,}/{skills:,} skills", shared, "≤ 500 ms"),
        (f"  on one core (load {load:.1f})", serial, ""),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("store", type=Path)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--make", type=int, default=0, help="first save this many skills")
    args = parser.parse_args()
    from run import print_table

    if args.make:
        from xbrain.store import Store

        cache = os.environ.get("XBRAIN_CACHE_DIR")
        save_skills(Store(args.store, cache_dir=Path(cache) if cache else None), args.make)

    rows = skill_build_rows(args.store, args.runs)
    floors = [f for _, samples, _ in rows for f in getattr(samples, "floors", [])]
    print_table(args.runs, [("python -c pass (floor)", floors, ""), *rows], [])


if __name__ == "__main__":
    main()
