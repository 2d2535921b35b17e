"""The possible-conflicts finder of a batch (issue 45 item 6): ``python bench/similar.py STORE``.

A batch of ``xbrain put`` asks ``SimilarFinder`` for the candidates of the first 50 of
its resources. This times those 50 calls (one finder, as a batch holds it) on a store
built by ``bench/large.py`` (or ``run.py``'s ``make_store``): the resources the next
batch of the load would put (new ids, the titles and purposes of pages already there),
CPU (user + sys of this process) and wall, the finder's opening apart. ``--dump FILE``
writes the candidates' ids for ``--titles`` resources spread over the corpus, to compare
two versions of the finder (nothing is written to the store: the finder only reads).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import man_resources

from xbrain.search.similar import SimilarFinder
from xbrain.text import SIMILAR


def cpu() -> float:
    times = os.times()
    return (times.user + times.system) * 1000


def batch_items(first: int, count: int) -> list[dict[str, object]]:
    return man_resources(first + count, 500)[first:]


def timed_calls(store: Path, cache: Path, items: list[dict[str, object]]) -> tuple[float, float]:
    """(CPU ms, wall ms) of one finder's calls for ``items`` (opened before the clock)."""
    with SimilarFinder(store, cache, SIMILAR) as finder:
        finder.find("warm", "")  # opens the index, reads the facts, loads the tokenizer
        started_cpu, started = cpu(), time.perf_counter()
        for item in items:
            if finder.find(str(item["title"]), str(item.get("purpose", "")), set()) is None:
                raise SystemExit("the index cannot answer (not fresh?)")
        return cpu() - started_cpu, (time.perf_counter() - started) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("store", type=Path)
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "xbrain")
    parser.add_argument("--first", type=int, default=100_000, help="the batch's first page")
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--dump", type=Path)
    parser.add_argument("--titles", type=int, default=400)
    args = parser.parse_args()
    if args.dump:
        pages = man_resources(45_254, 500)
        step = max(1, len(pages) // args.titles)
        picked = pages[::step][: args.titles]
        out = []
        with SimilarFinder(args.store, args.cache, SIMILAR) as finder:
            for item in picked:
                found = finder.find(str(item["title"]), str(item.get("purpose", "")), set())
                ids = None if found is None else [resource["id"] for resource in found]
                out.append([item["title"], ids])
        args.dump.write_text(json.dumps(out, ensure_ascii=False, indent=0))
        return
    items = batch_items(args.first, args.calls)
    runs = [timed_calls(args.store, args.cache, items) for _ in range(args.runs)]
    cpus, walls = [run[0] for run in runs], [run[1] for run in runs]
    print(
        f"{args.calls} finds: CPU median {statistics.median(cpus):.0f} ms "
        f"(min {min(cpus):.0f}), wall median {statistics.median(walls):.0f} ms; "
        f"load {os.getloadavg()[0]:.2f}"
    )


if __name__ == "__main__":
    main()
