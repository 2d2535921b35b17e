"""``bench/batch_profile.py`` times the steps of a real batch put: every step it names
still exists where it looks (a renamed function would fail the bench only in ``make
bench``), each timed step of a batch is seen, and the put itself succeeds."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.bench import bench_module
from tests.conftest import make

batch_profile = bench_module("batch_profile")


def test_a_batch_profiled_step_by_step(tmp_path: Path, segment_cache: Path) -> None:
    store = tmp_path / "store"
    init = [sys.executable, "-m", "xbrain", "init", "--store", str(store)]
    subprocess.run(init, check=True, capture_output=True)
    batch = tmp_path / "batch.json"
    batch.write_text(json.dumps([make(f"p-{i}", title=f"Profiled page {i}") for i in range(40)]))
    wall, cpu, spent = batch_profile.profile_batch(store, batch)
    assert wall > 0 and cpu > 0
    for step in ("stage the records (read, YAML, catalog)", "commit (objects, pack, ref)"):
        assert spent[step] > 0, step
    assert spent["search index upkeep (a hook)"] > 0  # a first put starts the index
    assert len(list((store / "resources").rglob("*.yaml"))) == 40
    table = batch_profile.table({"40": [(wall, cpu, spent)]})
    assert len(table.splitlines()) == 2 + 2 + len(batch_profile.STEPS) + 1
