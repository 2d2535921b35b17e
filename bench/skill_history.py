"""What a `skill save` costs as the skill's history grows.

A skill's ``skill.yaml`` lists every revision, and each save reads and rewrites it, so
a save's cost grows with the number of revisions. This script saves one skill
``--revisions`` times into a throwaway store, in one process, with the skill index
present (as after any recall, so each save also keeps it current), and prints per stretch
of history the median save (ms), beside two baselines measured in the same run:
``python -c pass`` (a fresh process, the floor of the other tables) and the first ten
saves of the skill (the same work without a history). Also printed: the median time to
dump and to load the last ``skill.yaml`` alone.

Run ``python bench/skill_history.py [--revisions 400]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import floor_once
from suite import table

from xbrain.codec import dump_yaml, load_yaml
from xbrain.store import Store


def median_ms(run: list[float]) -> float:
    return statistics.median(run) * 1000


def timed(action: Callable[[], object], times: int) -> list[float]:
    samples = []
    for _ in range(times):
        start = time.perf_counter()
        action()
        samples.append(time.perf_counter() - start)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--revisions", type=int, default=400, help="saves of the one skill")
    args = parser.parse_args()
    count = max(args.revisions, 20)
    floor = [floor_once() for _ in range(7)]  # ms
    with tempfile.TemporaryDirectory(prefix="xbrain-skill-history-") as tmp:
        root = Path(tmp)
        store = Store(root / "store", cache_dir=root / "cache")
        folder = root / "skill"
        folder.mkdir()
        saves = []
        for i in range(count):
            text = f"---\nname: demo\ndescription: revision {i}\n---\nStep {i}.\n"
            (folder / "SKILL.md").write_text(text)
            start = time.perf_counter()
            store.skill_save(folder)
            saves.append(time.perf_counter() - start)
            if i == 0:  # the skill index, as after any recall: each save then keeps it current
                store.skill_recall("revision")
        state = (root / "store" / "skills" / "demo" / "skill.yaml").read_bytes()
        value = load_yaml(state)
        dumps = timed(lambda: dump_yaml(value), 9)
        loads = timed(lambda: load_yaml(state), 9)
    first = median_ms(saves[:10])
    rows = [("python -c pass (floor)", statistics.median(floor)), ("save, revisions 1–10", first)]
    marks = sorted({m for m in (50, 200, 400, 1000, count) if m <= count})
    for mark in marks:
        stretch = saves[max(0, mark - 10) : mark]
        rows.append((f"save, revisions {mark - len(stretch) + 1}–{mark}", median_ms(stretch)))
    rows.append((f"dump skill.yaml ({count} revisions, {len(state):,} B)", median_ms(dumps)))
    rows.append((f"load skill.yaml ({count} revisions)", median_ms(loads)))
    print(f"one skill saved {count} times in-process (median ms; ratios to the floor and to")
    print("the first ten saves, both measured in this run)\n")
    shown = [
        (label, f"{ms:.1f}", f"{ms / rows[0][1]:.1f}", f"{ms / first:.1f}") for label, ms in rows
    ]
    print(table(shown, ("case", "median ms", "x floor", "x first saves")))


if __name__ == "__main__":
    main()
