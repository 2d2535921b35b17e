"""xbrain benchmarks: fresh-process latency of the core commands, printed as a table.

Run with ``make bench`` (or ``python bench/run.py [--runs N]``). Every case is timed as a
new process, like an agent hook calls it; each row is the median of N runs, with the
ratio against ``python -c pass`` measured in the same run. Nothing here is asserted.
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

PY = sys.executable


def resource(i: int, updated: str = "2026-01-01T00:00:00.000Z") -> dict[str, object]:
    return {
        "source": {"provider": "bench", "id": f"item-{i}", "url": f"https://example.com/items/{i}"},
        "title": f"Benchmark resource {i}",
        "text": f"Synthetic body text for resource {i}.\nIt has two lines and some words: keyboard focus dialog.",
        "summary": "A synthetic record used only to measure xbrain.",
        "purpose": "Measure write and read latency",
        "useWhen": ["benchmarking xbrain"],
        "limitations": ["Synthetic; not real content"],
        "savedReason": None,
        "updatedAt": updated,
    }


def xbrain(*args: str) -> list[str]:
    return [PY, "-m", "xbrain", *args]


def timed(cmd: list[str], before: Callable[[int], None] | None, runs: int) -> list[float]:
    samples = []
    env = {**os.environ, "XBRAIN_STORE": ""}
    for i in range(runs):
        if before:
            before(i)
        start = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, env=env)
        samples.append((time.perf_counter() - start) * 1000)
        if proc.returncode != 0:
            raise SystemExit(f"benchmark command failed: {cmd}\n{proc.stderr.decode()}")
    return samples


def make_store(root: Path, name: str, count: int) -> Path:
    source = root / f"{name}.json"
    source.write_text(
        json.dumps(
            {
                "version": 1,
                "resources": [
                    {**resource(i), "id": None} if False else _with_id(resource(i)) for i in range(count)
                ],
                "tombstones": [],
                "receipts": {},
            }
        )
    )
    store = root / name
    subprocess.run(xbrain("import-store", str(source), "--store", str(store)), check=True, capture_output=True)
    return store


def _with_id(item: dict[str, object]) -> dict[str, object]:
    return item


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    runs = args.runs
    rows: list[tuple[str, list[float], str]] = []
    with tempfile.TemporaryDirectory(prefix="xbrain-bench-") as tmp:
        root = Path(tmp)
        started = time.perf_counter()
        small = make_store(root, "store-100", 100)
        t0 = time.perf_counter()
        large = make_store(root, "store-10k", 10_000)
        import_ms = (time.perf_counter() - t0) * 1000
        setup_s = time.perf_counter() - started

        rows.append(("python -c pass (floor)", timed([PY, "-c", "pass"], None, runs), ""))
        rows.append(("xbrain --help", timed(xbrain("--help"), None, runs), "≤ 60 ms"))

        for label, store in (("100", small), ("10,000", large)):
            item = root / f"put-{label}.json"

            def update(i: int, item: Path = item) -> None:
                when = f"2026-02-01T00:00:{i:02d}.000Z"
                item.write_text(json.dumps(resource(7, when)))

            # first, put a different updatedAt each run so every run commits an update
            rows.append(
                (f"put 1 (update) into {label}", timed(xbrain("put", str(item), "--store", str(store)), update, runs), "≤ 150 ms")
            )
        rid = json.loads(
            subprocess.run(xbrain("inspect", _rid_of(7), "--store", str(large)), capture_output=True).stdout or b"{}"
        )
        del rid
        rows.append(("get from 10,000", timed(xbrain("get", _rid_of(7), "--store", str(large)), None, runs), ""))
        rows.append(("status of 10,000", timed(xbrain("status", "--store", str(large)), None, runs), ""))

        batch = root / "batch.json"
        batch_store = root / "batch-store"

        def fresh_batch(i: int) -> None:
            batch.write_text(json.dumps([resource(100_000 + i * 1000 + j) for j in range(1000)]))

        rows.append(
            ("put batch of 1,000 (new)", timed(xbrain("put", str(batch), "--store", str(batch_store)), fresh_batch, min(runs, 5)), "≤ 2,000 ms")
        )

    floor = statistics.median(rows[0][1])
    print(f"xbrain benchmarks — {runs} runs each, fresh process per run (python {sys.version.split()[0]})")
    print(f"setup: 10,000-resource store imported in {import_ms:,.0f} ms (total setup {setup_s:.1f} s)\n")
    print(f"| {'case':<30} | {'median ms':>9} | {'min':>7} | {'max':>7} | {'× floor':>7} | target |")
    print(f"|{'-' * 32}|{'-' * 11}|{'-' * 9}|{'-' * 9}|{'-' * 9}|--------|")
    for name, samples, target in rows:
        med = statistics.median(samples)
        print(
            f"| {name:<30} | {med:9.1f} | {min(samples):7.1f} | {max(samples):7.1f} | {med / floor:7.1f} | {target} |"
        )


def _rid_of(i: int) -> str:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from xbrain.model import resource_id

    return resource_id("bench", f"item-{i}")


if __name__ == "__main__":
    main()
