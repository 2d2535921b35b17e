"""SIGKILL at random moments of writes into a store whose git index is kept split (a
new shared base written, the index naming it, old bases removed): no lost write, the
next write succeeds, ``git status`` clean and ``git fsck --strict`` clean."""

from __future__ import annotations

import json
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import make
from xbrain.git import splitindex
from xbrain.store import Store

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("git") is None, reason="the git binary is not installed"),
]

# ``python -m xbrain`` with an index of 200 entries counting as big
_SPLIT_PUT = """
import sys
from xbrain.git import splitindex
splitindex.SPLIT_MIN = 200
sys.argv = ["xbrain", *sys.argv[1:]]
from xbrain.launch import main
main()
"""


def _git(store: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(store), *args], capture_output=True, text=True)


def test_sigkill_during_split_index_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(splitindex, "SPLIT_MIN", 200)
    store_dir = tmp_path / "store"
    store = Store(store_dir)
    store.put([make(f"seed-{i}") for i in range(250)])
    assert list((store_dir / ".git").glob("sharedindex.*"))
    rng = random.Random(20261205)
    probe = tmp_path / "probe.json"
    probe.write_text(json.dumps([make(f"probe-{i}") for i in range(150)]))
    started = time.monotonic()
    run = [sys.executable, "-c", _SPLIT_PUT]
    assert subprocess.run([*run, "put", str(probe), "--store", str(store_dir)]).returncode == 0
    duration = time.monotonic() - started
    expected = 400
    for round_ in range(8):
        batch = tmp_path / f"batch-{round_}.json"
        batch.write_text(json.dumps([make(f"r{round_}-{i}") for i in range(150)]))
        proc = subprocess.Popen(
            [*run, "put", str(batch), "--store", str(store_dir)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(rng.uniform(duration * 0.3, duration * 1.1))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        count = store.status()["resources"]
        assert count in (expected, expected + 150), count
        follow = Store(store_dir).put([make(f"follow-{round_}")])  # finishes the refresh
        assert follow["added"] == 1
        expected = count + 1
        assert _git(store_dir, "status", "--porcelain", "--untracked-files=all").stdout == ""
        fsck = _git(store_dir, "fsck", "--strict")
        assert fsck.returncode == 0, fsck.stderr
        assert _git(store_dir, "diff", "--cached", "--quiet").returncode == 0
        report = store.doctor()
        assert report["ok"], report["problems"]
        assert len(list((store_dir / ".git").glob("sharedindex.*"))) <= 3
