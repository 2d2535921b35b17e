"""xbrain benchmarks: fresh-process latency of the core commands, printed as a table.

Run with ``make bench`` (or ``python bench/run.py [--runs N]`` after
``python -m compileall xbrain``, as an installed wheel would be). Every case runs as a
new process, the way an agent hook calls xbrain; each row is the median of N runs, with
its ratio to ``python -c pass`` measured in the same run. Nothing here is asserted.
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
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from xbrain.model import resource_id

PY = sys.executable


def resource(i: int, updated: str = "2026-01-01T00:00:00.000Z") -> dict[str, object]:
    return {
        "source": {"provider": "bench", "id": f"item-{i}", "url": f"https://example.com/items/{i}"},
        "title": f"Benchmark resource {i}",
        "text": f"Synthetic body for resource {i}.\nTwo lines: keyboard focus dialog.",
        "summary": "A synthetic record used only to measure xbrain.",
        "purpose": "Measure write and read latency",
        "useWhen": ["benchmarking xbrain"],
        "limitations": ["Synthetic; not real content"],
        "savedReason": None,
        "updatedAt": updated,
    }


def xbrain(*args: str) -> list[str]:
    return [PY, "-m", "xbrain", *args]


def timed(cmd: list[str], runs: int, before: Callable[[int], None] | None = None) -> list[float]:
    samples = []
    for i in range(runs):
        if before is not None:
            before(i)
        start = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True)
        samples.append((time.perf_counter() - start) * 1000)
        if proc.returncode != 0:
            raise SystemExit(f"benchmark command failed: {cmd}\n{proc.stderr.decode()}")
    return samples


def make_store(root: Path, name: str, count: int) -> tuple[Path, float]:
    """A store of ``count`` resources, filled by one import-store commit."""
    source = root / f"{name}.json"
    document = {
        "version": 1,
        "resources": [resource(i) for i in range(count)],
        "tombstones": [],
        "receipts": {},
    }
    source.write_text(json.dumps(document))
    store = root / name
    start = time.perf_counter()
    subprocess.run(
        xbrain("import-store", str(source), "--store", str(store)), check=True, capture_output=True
    )
    return store, (time.perf_counter() - start) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=7, help="runs per case (median reported)")
    runs = parser.parse_args().runs
    rows: list[tuple[str, list[float], str]] = []
    with tempfile.TemporaryDirectory(prefix="xbrain-bench-") as tmp:
        root = Path(tmp)
        small, _ = make_store(root, "store-100", 100)
        large, import_ms = make_store(root, "store-10k", 10_000)

        rows.append(("python -c pass (floor)", timed([PY, "-c", "pass"], runs), ""))
        rows.append(("xbrain --help", timed(xbrain("--help"), runs), "≤ 60 ms"))
        for label, store in (("100", small), ("10,000", large)):
            item = root / f"put-{label}.json"

            def newer(i: int, item: Path = item) -> None:
                # a newer updatedAt every run, so every run commits an update
                item.write_text(json.dumps(resource(7, f"2026-02-01T00:00:{i:02d}.000Z")))

            cmd = xbrain("put", str(item), "--store", str(store))
            rows.append((f"put 1 into {label} (update)", timed(cmd, runs, newer), "≤ 150 ms"))
        rid = resource_id("bench", "item-7")
        rows.append(("get from 10,000", timed(xbrain("get", rid, "--store", str(large)), runs), ""))
        rows.append(("status of 10,000", timed(xbrain("status", "--store", str(large)), runs), ""))

        batch = root / "batch.json"

        def fresh_batch(i: int) -> None:
            batch.write_text(json.dumps([resource(100_000 + i * 1000 + j) for j in range(1000)]))

        cmd = xbrain("put", str(batch), "--store", str(root / "batch-store"))
        rows.append(
            ("put batch of 1,000 (new)", timed(cmd, min(runs, 5), fresh_batch), "≤ 2,000 ms")
        )

    floor = statistics.median(rows[0][1])
    print(
        f"xbrain benchmarks: median of {runs} fresh-process runs, python {sys.version.split()[0]}, "
        f"{os.cpu_count()} cores"
    )
    print(f"setup: a 10,000-resource store imported in {import_ms:,.0f} ms (one commit)\n")
    header = ("case", "median ms", "min", "max", "x floor", "target")
    print("| {:<28} | {:>9} | {:>7} | {:>7} | {:>7} | {:<10} |".format(*header))
    print(f"|{'-' * 30}|{'-' * 11}|{'-' * 9}|{'-' * 9}|{'-' * 9}|------------|")
    for name, samples, target in rows:
        median = statistics.median(samples)
        print(
            f"| {name:<28} | {median:9.1f} | {min(samples):7.1f} | {max(samples):7.1f} "
            f"| {median / floor:7.1f} | {target:<10} |"
        )


if __name__ == "__main__":
    main()
