"""``xbrain reindex --semantic`` on a store of 10,000 resources of real manual-page text
(the same store ``bench/run.py`` searches): wall and CPU time of the fresh process (its
forked helper included), passages embedded, passages per CPU-second, the ratio to
``python -c pass`` and the load average before and after, and a second run's catch-up
after one resource changed (only its passages).

``--baseline PATH`` also times another checkout's code (``PYTHONPATH=PATH``, e.g. a
detached worktree of an older commit, last in the path) on the same store, just before,
with the same model: the speed-up is measured in one run, under the same load. ``--time-only`` stops
after the timings (no catch-up).

Run: ``python bench/semantic_build.py [--count 10000] [--provider packaged]``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import floor_once, man_resources, xbrain

TARGET = 60.0  # seconds for 10,000 resources on the 2-core machine (issue 43)


def make_store(root: Path, name: str, items: list[dict[str, object]]) -> tuple[Path, float]:
    """``run.make_store``, letting through the man pages' example URLs with a user and
    password (the secret scan's basic-auth rule flags them)."""
    source = root / f"{name}.json"
    document = {"version": 1, "resources": items, "tombstones": [], "receipts": {}}
    source.write_text(json.dumps(document))
    store = root / name
    for key, value in (("limits.maxEntries", 1_000_000), ("limits.maxBytes", 4 << 30)):
        run = xbrain("config", key, str(value), "--store", str(store))
        subprocess.run(run, check=True, capture_output=True)
    started = time.perf_counter()
    run = xbrain("import-store", str(source), "--store", str(store))
    run += ["--allow-secret", "basic-auth"]
    subprocess.run(run, check=True, capture_output=True)
    return store, time.perf_counter() - started


def build(store: Path, provider: str, code: str | None = None) -> dict[str, Any]:
    """One ``reindex --semantic`` from nothing: wall and CPU seconds, its report."""
    env = dict(os.environ)
    if code is not None:
        env["PYTHONPATH"] = code
        code = code.split(os.pathsep)[-1]  # the checkout: the last entry
    load = os.getloadavg()[0]
    started = time.perf_counter()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(
        xbrain("reindex", "--semantic", "--provider", provider, "--store", str(store)),
        check=True,
        capture_output=True,
        text=True,
        env=env,
        cwd=code,
    )
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = sum(getattr(after, f) - getattr(before, f) for f in ("ru_utime", "ru_stime"))
    report = json.loads(done.stdout)["semantic"]
    return {"wall": seconds, "cpu": cpu, "load": (load, os.getloadavg()[0]), **report}


def line(label: str, got: dict[str, Any], floor: float) -> str:
    rate = got["rows"] / got["cpu"] if got["cpu"] else 0.0
    return (
        f"{label}: {got['wall']:.1f} s wall ({got['wall'] * 1000 / floor:.0f}x python -c pass), "
        f"{got['cpu']:.1f} s CPU, {got['rows']} passages of {got['records']} records, "
        f"{rate:.0f} passages per CPU-second; load average {got['load'][0]:.1f} → "
        f"{got['load'][1]:.1f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--provider", default="packaged", choices=["packaged", "hashing"])
    parser.add_argument("--baseline", help="another checkout to time first (PYTHONPATH)")
    parser.add_argument("--time-only", action="store_true", help="no catch-up run")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="xbrain-semantic-build-") as tmp:
        root = Path(tmp)
        items = man_resources(args.count, 4000)
        store, _ = make_store(root, f"search-{args.count}", items)
        floor = min(floor_once() for _ in range(5))
        print(
            f"reindex --semantic, {args.count} resources ({args.provider}); python -c pass "
            f"{floor:.1f} ms; target ≤ {TARGET:.0f} s wall for 10,000 on 2 cores"
        )
        if args.baseline:
            old = build(store, args.provider, args.baseline)
            print(line(f"  baseline ({args.baseline})", old, floor))
        new = build(store, args.provider)
        print(line("  this tree", new, floor))
        print(f"  model {new['model']}, gate {new['floor']}")
        if args.baseline:
            print(
                f"  speed-up: {old['wall'] / new['wall']:.2f}x wall, "
                f"{old['cpu'] / new['cpu']:.2f}x CPU"
            )
        if args.time_only:
            return
        changed = dict(items[0])
        changed["text"] = str(changed["text"]) + " A sentence added at the end."
        changed["updatedAt"] = "2027-01-01T00:00:00Z"  # a newer revision
        source = root / "changed.json"
        source.write_text(json.dumps(changed))
        subprocess.run(
            xbrain("put", str(source), "--store", str(store)), check=True, capture_output=True
        )
        started = time.perf_counter()
        subprocess.run(
            xbrain("search", "list directory contents", "--store", str(store)),
            check=True,
            capture_output=True,
        )
        print(f"  first search after one resource changed: {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
