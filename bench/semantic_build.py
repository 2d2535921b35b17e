"""``xbrain reindex --semantic`` on a store of 10,000 resources of real manual-page text
(the same store ``bench/run.py`` searches): wall time of the fresh process, passages
embedded, and a second run's catch-up after one resource changed (only its passages).

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

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import man_resources, xbrain


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--provider", default="packaged", choices=["packaged", "hashing"])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="xbrain-semantic-build-") as tmp:
        root = Path(tmp)
        items = man_resources(args.count, 4000)
        store, _ = make_store(root, f"search-{args.count}", items)
        started = time.perf_counter()
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        done = subprocess.run(
            xbrain("reindex", "--semantic", "--provider", args.provider, "--store", str(store)),
            check=True,
            capture_output=True,
            text=True,
        )
        seconds = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = sum(getattr(after, f) - getattr(before, f) for f in ("ru_utime", "ru_stime"))
        report = json.loads(done.stdout)["semantic"]
        print(
            f"reindex --semantic, {args.count} resources ({args.provider}): {seconds:.1f} s "
            f"wall, {cpu:.1f} s CPU (its processes), {report['rows']} passages of "
            f"{report['records']} records, model {report['model']}, gate {report['floor']} "
            f"(target ≤ 60 s wall for 10,000; load average then {os.getloadavg()[0]:.1f})"
        )
        changed = dict(items[0])
        changed["text"] = str(changed["text"]) + " A sentence added at the end."
        changed["updatedAt"] = "2027-01-01T00:00:00Z"  # a newer revision
        source = root / "changed.json"
        source.write_text(json.dumps(changed))
        subprocess.run(xbrain("put", str(source), "--store", str(store)), check=True)
        started = time.perf_counter()
        subprocess.run(
            xbrain("search", "list directory contents", "--store", str(store)),
            check=True,
            capture_output=True,
        )
        print(f"first search after one resource changed: {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
