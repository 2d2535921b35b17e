"""The skill index's whole build (issue 45 item 4: 1,000 skills ≤ 0.5 s), as ``xbrain
reindex`` runs it (shared with a helper process from ``skilldoc.PARALLEL_MIN`` skills
on), serially (one core) and shared whatever the count beside it, each with its CPU time.

Each run rebuilds the skill index of the store in this process (the segmenter and the
repository already open, as in ``reindex``), after a ``python -c pass`` timed just
before it. The first row names how many skills the index holds of how many the store has:
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
    """Build times of the skill index of ``store``: as ``reindex`` builds it (shared with a
    helper from ``PARALLEL_MIN`` skills on, when a core is idle), on one core, and shared
    whatever the count; each row names its median CPU time (this process and the helper)."""
    import resource

    from xbrain.core import Core, View
    from xbrain.search import skilldoc
    from xbrain.search.skills import reindex_skills

    def cpu() -> float:
        own, helper = (
            resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
        )
        return own.ru_utime + own.ru_stime + helper.ru_utime + helper.ru_stime

    cache = os.environ.get("XBRAIN_CACHE_DIR")
    core = Core(store, cache_dir=Path(cache) if cache else None)
    least, idle = skilldoc.PARALLEL_MIN, skilldoc.idle_core
    modes = {"reindex": least, "serial": 10**9, "shared": 1}
    samples = {mode: Samples() for mode in modes}
    for each in samples.values():
        each.floors = []
    cpus: dict[str, list[float]] = {mode: [] for mode in modes}
    count = 0
    loads = []
    with core.locked(), core.git() as git:
        skills = len(View(git.snapshot()).children("skills"))
        reindex_skills(git, core.cache_dir, View(git.snapshot()))  # warm: pages, segmenter
        # every row builds whatever the load (reindex itself builds on one core when the
        # last minute's load leaves no core idle): the median load is in the second row
        skilldoc.idle_core = lambda: True
        try:
            for _ in range(runs):
                for mode, bound in modes.items():
                    skilldoc.PARALLEL_MIN = bound
                    samples[mode].floors.append(floor_once())
                    loads.append(os.getloadavg()[0])
                    started, used = time.perf_counter(), cpu()
                    count = reindex_skills(git, core.cache_dir, View(git.snapshot()))
                    samples[mode].append((time.perf_counter() - started) * 1000)
                    cpus[mode].append((cpu() - used) * 1000)
        finally:
            skilldoc.PARALLEL_MIN, skilldoc.idle_core = least, idle
    load = sorted(loads)[len(loads) // 2]

    def used(mode: str) -> str:
        return f"cpu {sorted(cpus[mode])[len(cpus[mode]) // 2]:.0f} ms"

    return [
        (
            f"reindex {count:,}/{skills:,} skills ({used('reindex')})",
            samples["reindex"],
            "≤ 500 ms",
        ),
        (f"  on one core ({used('serial')}, load {load:.1f})", samples["serial"], ""),
        (f"  shared from 1 skill ({used('shared')})", samples["shared"], ""),
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
