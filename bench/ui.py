"""How long ``xbrain ui`` takes to show its first page on a 10,000-resource store.

Each run starts ``python -m xbrain ui`` afresh and measures: until it prints its URL
(listening), until the first page (the store's summary) has been answered, and then a
search page and a resource page, each over one new HTTP connection as a browser's first
request is. Printed: the median of the runs, in ms, against the target (first page
≤ 1 s), each with its ratio to ``python -c pass`` timed just before each run (the
machine's speed drifts; the ratio does not), and the load average.

Run ``python bench/ui.py [--runs 5] [--store PATH]`` (without ``--store``, a throwaway
store of 10,000 resources is imported first, about 10 s).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import PY, floor_once, make_store, resource

TARGET_MS = 1000.0


def fetch(port: int, path: str) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        response.read()
        return response.status
    finally:
        conn.close()


def once(store: Path, rid: str) -> dict[str, float]:
    start = time.perf_counter()
    proc = subprocess.Popen(
        [PY, "-m", "xbrain", "ui", "--store", str(store), "--idle", "120"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        listening = time.perf_counter()
        hostport, token = url.removeprefix("http://").split("/")[:2]
        port = int(hostport.rsplit(":", 1)[1])
        assert fetch(port, f"/{token}/") == 200
        first = time.perf_counter()
        assert fetch(port, f"/{token}/search?q=keyboard+focus+dialog") == 200
        searched = time.perf_counter()
        assert fetch(port, f"/{token}/resource/{rid}") == 200
        shown = time.perf_counter()
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    return {
        "listening": (listening - start) * 1000,
        "first page": (first - start) * 1000,
        "then a search": (searched - first) * 1000,
        "then a resource": (shown - searched) * 1000,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--store", type=Path, help="an existing store (default: 10,000 made)")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="xbrain-bench-ui-"))
    try:
        if args.store is None:
            store, _ = make_store(tmp, "store-10k", [resource(i) for i in range(10_000)])
        else:
            store = args.store
        listed = subprocess.run(
            [PY, "-m", "xbrain", "list", "--limit", "1", "--store", str(store)],
            check=True,
            capture_output=True,
            text=True,
        )
        rid = json.loads(listed.stdout)["results"][0]["id"]
        once(store, rid)  # warm the page cache and the derived indexes
        runs = []
        for _ in range(args.runs):
            floor = floor_once()
            runs.append({**once(store, rid), "python -c pass": floor})
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    rows: list[tuple[str, ...]] = []
    floor = statistics.median(run["python -c pass"] for run in runs)
    for name in runs[0]:
        median = statistics.median(run[name] for run in runs)
        target = f"≤ {TARGET_MS:.0f}" if name == "first page" else ""
        verdict = ("ok" if median <= TARGET_MS else "over") if target else ""
        rows.append((name, f"{median:.0f}", f"{median / floor:.1f}×", target, verdict))
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"xbrain ui on {store.name}: median of {args.runs} fresh starts, ms from the start")
    print(f"(python -c pass {floor:.1f} ms in the same runs; load average {load})\n")
    print("| step | median ms | vs python -c pass | target | |\n|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
