"""A fresh `xbrain put` / `xbrain skill save` process: it runs without Python's cycle
collector (a batch turns it back on) and ends without tearing its modules down, yet
everything Python's shutdown does that matters still happens: atexit handlers run,
the standard streams are flushed, a file left open is written out, the exit code
stands."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, make

pytestmark = pytest.mark.skipif(
    not Path("/proc/self/fd").is_dir(), reason="the fast exit lists /proc/self/fd (Linux)"
)

# The console script's path (xbrain.launch), with probes: `collections` counts the cycle
# collector's runs once `main` runs (one line each), "fast exit" on stderr says the
# process ended in os._exit, and PROBE (Python code) runs inside the command, just
# before its write.
DRIVER = """
import gc, os, sys
collections = sys.argv.pop(1)
started = []
def count(phase, info):
    if phase == "start" and started:
        with open(collections, "a") as out:
            out.write(f"{info['generation']}\\n")
gc.callbacks.append(count)
def fast_exit(code, real=os._exit):
    os.write(2, b"fast exit\\n")
    real(code)
os._exit = fast_exit
probe = os.environ.get("PROBE")
if probe:
    import xbrain.lightwrite as light
    plain = light.write
    def write(*args, **kwargs):
        exec(probe, {})
        return plain(*args, **kwargs)
    light.write = write
sys.argv = ["xbrain", *sys.argv[1:]]
from xbrain.launch import main
started.append(True)
main()
"""


def run_write(
    tmp_path: Path, *args: str, probe: str = "", stdout: int | None = subprocess.PIPE
) -> tuple[int, str, str, list[str]]:
    """(exit code, stdout, stderr, one line per cycle collection) of ``xbrain ARGS``."""
    counted = tmp_path / f"collections-{len(list(tmp_path.glob('collections-*')))}"
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, str(counted), *args],
        stdout=stdout,
        stderr=subprocess.PIPE,
        env={**os.environ, "PROBE": probe},
        timeout=120,
    )
    runs = counted.read_text().split() if counted.exists() else []
    out = done.stdout.decode() if done.stdout is not None else ""
    return done.returncode, out, done.stderr.decode(), runs


def test_a_put_runs_without_the_cycle_collector_and_skips_the_teardown(
    tmp_path: Path, store_dir: Path
) -> None:
    """Before: some 60 collections while the write loaded its modules (4–5 ms of a
    put), and Python's whole shutdown after the output (≈ 2.5 ms more than os._exit)."""
    item = tmp_path / "item.json"
    item.write_text(json.dumps(make("probe-1")))
    code, out, err, runs = run_write(tmp_path, "put", str(item), "--store", str(store_dir))
    assert (code, err, runs) == (0, "fast exit\n", [])
    assert json.loads(out)["added"] == 1
    item.write_text(
        json.dumps(make("probe-1", title="A newer title", updatedAt="2031-01-01T00:00:00.000Z"))
    )
    code, out, err, runs = run_write(tmp_path, "put", str(item), "--store", str(store_dir))
    assert (code, err, runs) == (0, "fast exit\n", []) and json.loads(out)["updated"] == 1


def test_a_skill_save_runs_without_the_cycle_collector_and_skips_the_teardown(
    tmp_path: Path, store_dir: Path
) -> None:
    skill = EXAMPLES / "skills" / "deploy-check"
    code, out, err, runs = run_write(
        tmp_path, "skill", "save", str(skill), "--store", str(store_dir)
    )
    assert (code, err, runs) == (0, "fast exit\n", []) and json.loads(out)["status"] == "created"


def test_a_failed_write_keeps_its_exit_code_and_its_one_line(
    tmp_path: Path, store_dir: Path
) -> None:
    missing = tmp_path / "missing.json"
    code, out, err, _ = run_write(tmp_path, "put", str(missing), "--store", str(store_dir))
    assert (code, out, err) == (3, "", f"No such file: {missing}\nfast exit\n")
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    code, out, err, _ = run_write(tmp_path, "put", str(bad), "--store", str(store_dir))
    assert (code, out, err) == (4, "", "Invalid resource JSON.\nfast exit\n")


def test_a_batch_runs_with_the_cycle_collector(tmp_path: Path, store_dir: Path) -> None:
    """Each record's YAML leaves a reference cycle (ruamel's loader): a batch of 1,000
    without the collector held ≈ 190 MB more."""
    batch = tmp_path / "batch.json"
    batch.write_text(json.dumps([make(f"batch-{i}") for i in range(200)]))
    code, out, err, runs = run_write(tmp_path, "put", str(batch), "--store", str(store_dir))
    assert (code, err) == (0, "fast exit\n") and json.loads(out)["added"] == 200
    assert runs  # the collector ran


def test_atexit_handlers_the_write_registers_still_run(tmp_path: Path, store_dir: Path) -> None:
    marker = tmp_path / "ran"
    probe = f"import atexit\natexit.register(lambda: open({str(marker)!r}, 'w').write('ran'))\n"
    item = tmp_path / "item.json"
    item.write_text(json.dumps(make("probe-2")))
    code, out, err, _ = run_write(
        tmp_path, "put", str(item), "--store", str(store_dir), probe=probe
    )
    assert (code, err) == (0, "fast exit\n") and json.loads(out)["added"] == 1
    assert marker.read_text() == "ran"


def test_a_file_left_open_ends_the_process_the_usual_way(tmp_path: Path, store_dir: Path) -> None:
    """Its buffer is written when Python's shutdown frees it: the fast exit would lose it,
    so the process ends as it always did."""
    left = tmp_path / "left-open.txt"
    probe = f"import builtins\nbuiltins.kept_open = open({str(left)!r}, 'w')\nkept_open.write('all of it')\n"
    item = tmp_path / "item.json"
    item.write_text(json.dumps(make("probe-3")))
    code, out, err, _ = run_write(
        tmp_path, "put", str(item), "--store", str(store_dir), probe=probe
    )
    assert (code, err) == (0, "") and json.loads(out)["added"] == 1
    assert left.read_text() == "all of it"


def test_output_to_a_full_disk_or_a_closed_pipe_after_a_write(
    tmp_path: Path, store_dir: Path
) -> None:
    item = tmp_path / "item.json"
    item.write_text(json.dumps(make("probe-4")))
    argv = [sys.executable, "-m", "xbrain", "put", str(item), "--store", str(store_dir)]
    if Path("/dev/full").exists():
        with open("/dev/full", "wb") as full:
            done = subprocess.run(argv, stdout=full, stderr=subprocess.PIPE, timeout=120)
        assert done.returncode == 1 and done.stderr.decode().startswith("The disk is full")
        assert done.stderr.decode().count("\n") == 1
    item.write_text(
        json.dumps(make("probe-4", title="Newer", updatedAt="2031-01-01T00:00:00.000Z"))
    )
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.close()  # the reader is gone before a byte is written
        assert (proc.wait(timeout=120), proc.stderr.read().decode()) == (1, "")
