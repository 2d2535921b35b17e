"""How a store's packs age: many batch puts, then the pack count, sizes and a fresh put.

Loads ``--batches`` batch puts of ``--size`` new resources each (one process, the
library API, each batch its own commit and so its own pack), then prints the number of
packs, the loose objects, the size of ``.git/objects`` beside the working tree's
records, and the median time of a fresh-process ``put`` of one changed resource (with
``python -c pass`` timed in the same loop, and the ratio). ``--gc`` also runs
``xbrain gc`` and measures again.

Run ``python bench/packs.py [--batches 200] [--size 100] [--runs 9] [--gc]``; to measure
another checkout's code, run it with that checkout on ``PYTHONPATH``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from large import wait_for_upkeep
from run import floor_once, newer_item, resource, xbrain

from xbrain.store import Store


def tree_bytes(root: Path, skip: str | None = None) -> int:
    total = 0
    for directory, dirs, names in os.walk(root):
        if skip is not None and directory == str(root):
            dirs[:] = [d for d in dirs if d != skip]
        total += sum(os.lstat(os.path.join(directory, name)).st_size for name in names)
    return total


def figures(store: Path) -> dict[str, float]:
    objects = store / ".git" / "objects"
    packs = list((objects / "pack").glob("*.pack"))
    loose = sum(len(os.listdir(objects / d)) for d in os.listdir(objects) if len(d) == 2)
    return {
        "packs": len(packs),
        "loose objects": loose,
        "pack MB": sum(p.stat().st_size for p in packs) / 1e6,
        ".git/objects MB": tree_bytes(objects) / 1e6,
        "working tree MB": tree_bytes(store, skip=".git") / 1e6,
    }


def fresh_put(store: Path, runs: int, month: str) -> tuple[float, float]:
    """Median ms of a fresh-process put of one changed resource (newer than any before
    it: ``month`` grows from one measurement to the next), and of the floor."""
    item = Path(tempfile.mkdtemp()) / "item.json"
    write = newer_item(item, month)
    puts, floors = [], []
    for i in range(runs):
        write(i)
        floors.append(floor_once())
        start = time.perf_counter()
        subprocess.run(
            xbrain("put", str(item), "--store", str(store)), check=True, capture_output=True
        )
        puts.append((time.perf_counter() - start) * 1000)
    return statistics.median(puts), statistics.median(floors)


def report(label: str, store: Path, runs: int, month: str) -> None:
    wait_for_upkeep(store)  # a detached pack merge still running is part of the load
    put, floor = fresh_put(store, runs, month)
    print(
        json.dumps(
            {
                "at": label,
                **{k: round(v, 2) for k, v in figures(store).items()},
                "fresh put ms": round(put, 1),
                "floor ms": round(floor, 1),
                "ratio": round(put / floor, 2),
            }
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--batches", type=int, default=200)
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--gc", action="store_true")
    parser.add_argument("--store", type=Path)
    args = parser.parse_args()
    store = args.store or Path(tempfile.mkdtemp()) / "store"
    subprocess.run(
        xbrain("config", "limits.maxEntries", "1000000", "--store", str(store)),
        check=True,
        capture_output=True,
    )
    api = Store(store)
    start = time.perf_counter()
    for batch in range(args.batches):
        api.put([resource(batch * args.size + j) for j in range(args.size)])
    print(
        json.dumps(
            {"loaded": args.batches * args.size, "seconds": round(time.perf_counter() - start, 1)}
        )
    )
    report(f"after {args.batches} batches", store, args.runs, "2027-03")
    if args.gc:
        subprocess.run(xbrain("gc", "--store", str(store)), check=True, capture_output=True)
        report("after xbrain gc", store, args.runs, "2027-04")


if __name__ == "__main__":
    main()
