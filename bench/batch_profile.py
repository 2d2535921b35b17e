"""Where the time of a batch `put` of 1,000 new resources goes, and what grows with the store.

Each run is a fresh process that runs ``xbrain put FILE --store STORE`` as the console
script does (``xbrain.launch.main``), with timers around the steps of the write: staging
the records (and, inside it, reading the committed trees, the catalog shards and the
secret scan), the checks, building the trees, writing the pack, the working tree and git
index, the search index's upkeep, the conflict check. A step's time is the wall time of
its outermost calls on the thread that ran them; the git index and the files written by
a thread are shown apart (they run beside the hooks). Printed: the median of each step
over the runs, the process's wall and CPU time (with the helper process that counts the
conflict candidates), for each store given.

The 100,000-record table of ``bench/run.py --large`` runs two of its batches this way
(at 10,000 and at the end of the load) to show what a batch costs more in a bigger store.

Run ``python bench/batch_profile.py --store PATH [--store PATH2] [--runs 3]``: each run
puts 1,000 new manual-page resources into the store (it grows by 1,000 a run).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

PY = sys.executable

# The child: the put as ``xbrain put`` runs it, with timers; one JSON line at the end.
CHILD = """
import time
T0 = time.perf_counter()
import importlib, json, sys, threading
STEPS = json.loads(sys.argv[1])
spent, depth = {}, {}
def timer(plain, label):
    def timed(*args, **kwargs):
        key = (label, threading.get_ident())
        depth[key] = depth.get(key, 0) + 1
        started = time.perf_counter()
        try:
            return plain(*args, **kwargs)
        finally:
            depth[key] -= 1
            if depth[key] == 0:  # the outermost call only (a tree's subtrees: one step)
                spent[label] = spent.get(label, 0.0) + time.perf_counter() - started
    return timed
for module, name, label in STEPS:
    owner = importlib.import_module(module)
    cls, _, attr = name.rpartition(".")
    if cls:
        owner = getattr(owner, cls)
    plain = getattr(owner, attr)
    setattr(owner, attr, timer(plain, label))
    if not cls:  # a function imported by name elsewhere: there too
        for other in list(sys.modules.values()):
            if getattr(other, "__name__", "").startswith("xbrain") and \\
                    getattr(other, attr, None) is plain:
                setattr(other, attr, timer(plain, label))
sys.argv = ["xbrain", *sys.argv[2:]]
from xbrain import launch
try:
    launch.main()
except SystemExit as ended:
    code = ended.code
else:
    code = 0
spent["in the process, in all"] = time.perf_counter() - T0
print(json.dumps({"code": code, "spent": {k: v * 1000 for k, v in spent.items()}}))
sys.stdout.flush()
raise SystemExit(code)
"""

# (module, function or Class.method, label), in the order a batch reaches them
STEPS = [
    ("xbrain.resources", "apply_resources", "stage the records (read, YAML, catalog)"),
    ("xbrain.git.objects", "Snapshot._tree", "  of which: committed trees read"),
    ("xbrain.core.shards", "Staged.shard", "  of which: catalog shards read"),
    ("xbrain.core.view", "Transaction.scan_secrets", "  of which: secret scan"),
    ("xbrain.core.view", "Transaction.finish", "finish the staging (shards written)"),
    ("xbrain.git.worktree", "Worktree.check_worktree_paths", "check: the paths"),
    ("xbrain.git.worktree", "Worktree.hand_edits", "check: no edits by hand"),
    ("xbrain.git.writing", "Writer.commit", "commit (objects, pack, ref)"),
    ("xbrain.git.writing", "Writer._build_tree", "  of which: trees built"),
    ("xbrain.git.writing", "Writer._add_objects", "  of which: pack written"),
    ("xbrain.git.worktree", "Worktree.refresh_worktree", "working tree: planned, started"),
    ("xbrain.search.service", "after_commit", "search index upkeep (a hook)"),
    ("xbrain.git.indexupdate", "Update.wait", "wait for the working tree and git index"),
    ("xbrain.git.indexupdate", "Update._run", "(a thread) git index and files"),
    ("xbrain.resourceconflicts", "conflicts", "possible conflicts"),
]


def _children_cpu_ms() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (used.ru_utime + used.ru_stime) * 1000


def profile_batch(store: Path, batch: Path) -> tuple[float, float, dict[str, float]]:
    """One batch put through the timed child: its wall and CPU (ms, with its helper
    process) and each step's ms."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    started, cpu = time.perf_counter(), _children_cpu_ms()
    cmd = [PY, "-c", CHILD, json.dumps(STEPS), "put", str(batch), "--store", str(store)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd="/tmp")
    wall, cpu = (time.perf_counter() - started) * 1000, _children_cpu_ms() - cpu
    lines = [line for line in proc.stdout.splitlines() if line.startswith('{"code"')]
    if proc.returncode != 0 or not lines:
        raise SystemExit(f"a profiled batch failed:\n{proc.stderr[-2000:]}")
    spent: dict[str, float] = json.loads(lines[-1])["spent"]
    return wall, cpu, spent


def table(columns: dict[str, list[tuple[float, float, dict[str, float]]]]) -> str:
    """The steps' medians, one column per store (a markdown table)."""
    heads = list(columns)
    out = ["| step (ms, median) | " + " | ".join(heads) + " |", "|---" * (len(heads) + 1) + "|"]

    def row(label: str, pick: Any) -> None:
        cells = [
            f"{statistics.median(pick(run) for run in runs):,.0f}" for runs in columns.values()
        ]
        out.append(f"| {label} | " + " | ".join(cells) + " |")

    row("the batch, wall (a fresh process)", lambda run: run[0])
    row("its CPU, user + system (with the helper)", lambda run: run[1])
    for label in [label for _, _, label in STEPS] + ["in the process, in all"]:
        row(label, lambda run, label=label: run[2].get(label, 0.0))
    return "\n".join(out)


def new_pages(store: Path, count: int) -> list[dict[str, Any]]:
    """``count`` manual-page resources the store does not hold yet (the pages after the
    ones ``bench/large.py`` loads, by the store's resource count)."""
    from large import clean_pages

    held = sum(1 for _ in (store / "resources").rglob("*.yaml"))
    return clean_pages(held + count, 500)[held : held + count]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--store", type=Path, action="append", required=True)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    subprocess.run(
        [PY, "-m", "compileall", "-q", "xbrain"], check=True, cwd=Path(__file__).parent.parent
    )
    columns: dict[str, list[tuple[float, float, dict[str, float]]]] = {}
    for store in args.store:
        pages = new_pages(store, 1000 * args.runs)
        held = sum(1 for _ in (store / "resources").rglob("*.yaml"))
        runs = columns.setdefault(f"{held:,} records", [])
        batch = store.parent / f"{store.name}-profile-batch.json"
        for i in range(args.runs):
            batch.write_text(json.dumps(pages[i * 1000 : (i + 1) * 1000]))
            runs.append(profile_batch(store, batch))
            print(f"  {store}: batch {i + 1}: {runs[-1][0]:.0f} ms", file=sys.stderr)
        batch.unlink()
    print(table(columns))


if __name__ == "__main__":
    main()
