"""Reading every record of a kind: in a helper process for big stores, serially for
small ones, the same records in the same order either way."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import make
from xbrain.core import View, bulk
from xbrain.errors import CorruptStoreError
from xbrain.kinds import resource as resource_kind
from xbrain.store import Store


@pytest.fixture
def store(tmp_path: Path, segment_cache: Path) -> Store:
    found = Store(tmp_path / "store", cache_dir=segment_cache)
    found.put([make(f"b{i}", text=f"body {i} 中文") for i in range(23)])
    return found


def read(store: Store, **progress: Any) -> list[dict[str, Any]]:
    with store.core.git() as git:
        return list(bulk.records(git, View(git.snapshot()), resource_kind.KIND.name, **progress))


def test_the_helper_process_reads_what_a_serial_read_reads(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    serial = read(store)
    assert len(serial) == 23 and all(r["id"].startswith("resource_") for r in serial)
    started: list[int] = []
    real = bulk._parallel

    def spy(*args: Any) -> Any:
        started.append(1)
        return real(*args)

    monkeypatch.setattr(bulk, "PARALLEL_MIN", 1)
    monkeypatch.setattr(bulk, "CHUNK", 4)
    monkeypatch.setattr(bulk.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(bulk, "_parallel", spy)
    steps: list[tuple[int, int]] = []
    parallel = read(store, progress=lambda step, total: steps.append((step, total)))
    assert started == [1]  # the helper process did the parsing
    assert parallel == serial
    assert sum(step for step, _ in steps) == 23 and {total for _, total in steps} == {23}


@pytest.mark.parametrize("helper", [False, True])
def test_a_damaged_record_is_one_clear_error_from_either_path(
    store: Store, monkeypatch: pytest.MonkeyPatch, helper: bool
) -> None:
    rid = read(store)[5]["id"]
    with store.core.transaction("test") as txn:  # a record no parser accepts
        txn.write(resource_kind.KIND.path(rid), b"id: [not, a, resource]\n")
    if helper:
        monkeypatch.setattr(bulk, "PARALLEL_MIN", 1)
        monkeypatch.setattr(bulk, "CHUNK", 4)
        monkeypatch.setattr(bulk.os, "cpu_count", lambda: 2)
    with pytest.raises(CorruptStoreError, match=rid):
        read(store)


@pytest.mark.parametrize("where", ["pool", "process"])
def test_a_pool_that_cannot_start_falls_back_to_reading_here(
    store: Store, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    def refuse(*args: Any, **kwargs: Any) -> None:
        raise OSError("no semaphores here")

    monkeypatch.setattr(bulk, "PARALLEL_MIN", 1)
    monkeypatch.setattr(bulk.os, "cpu_count", lambda: 2)
    if where == "pool":
        monkeypatch.setattr(bulk, "ProcessPoolExecutor", refuse)
    else:  # the pool is made, its process is not (a process limit, say)
        monkeypatch.setattr(bulk.ProcessPoolExecutor, "submit", refuse)
    assert len(read(store)) == 23
    with store.core.git() as git:
        view = View(git.snapshot())
        seen: list[int] = []

        class Here:
            def chunk(self, records: list[Any], first: int) -> None:
                seen.extend(range(first, first + len(records)))

            def finish(self) -> None:
                return None

        assert bulk.process(git, view, resource_kind.KIND.name, Here(), Here) == (False, None)
    assert seen == list(range(23))


def test_a_helper_that_dies_midway_leaves_the_rest_to_a_serial_read(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    from concurrent.futures.process import BrokenProcessPool

    serial = read(store)

    def dies_after_one(store_path: Path, commit: str, parse: Any, chunks: Any) -> Any:
        yield serial[: len(chunks[0])]  # the first chunk, then the helper is gone
        raise BrokenProcessPool("the helper was killed")

    monkeypatch.setattr(bulk, "PARALLEL_MIN", 1)
    monkeypatch.setattr(bulk, "CHUNK", 4)
    monkeypatch.setattr(bulk.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(bulk, "_parallel", dies_after_one)
    assert read(store) == serial


_SLOW_WORKERS = """
import os, time
import os
from pathlib import Path

def _busy():
    Path(os.environ["XB_TEST_MARK"]).write_text(str(os.getpid()))
    time.sleep(120)

def parse(data):
    _busy()

class Here:
    def chunk(self, records, first):
        time.sleep(120)
    def finish(self):
        return None

class Helper(Here):
    def chunk(self, records, first):
        _busy()
"""

_PARENT = """
import sys
sys.path.insert(0, sys.argv[1])
import slowworkers
import os
from pathlib import Path
from xbrain.core import View, bulk
from xbrain.kinds import resource as resource_kind
from xbrain.store import Store

bulk.PARALLEL_MIN = 1
bulk.os.cpu_count = lambda: 2
store = Store(Path(sys.argv[2]))
with store.core.git() as git:
    view = View(git.snapshot())
    kind = resource_kind.KIND.name
    if sys.argv[3] == "process":
        bulk.process(git, view, kind, slowworkers.Here(), slowworkers.Helper)
    else:
        _, items = bulk._items(view, kind)
        for _ in bulk._parallel(git.path, view.snap.commit, slowworkers.parse, [items[:2]] * 3):
            pass
"""


def _state(pid: int) -> str | None:
    """A process's state letter (``Z`` for a zombie), None when it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return stat.rpartition(")")[2].split()[0]


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads process states in /proc")
@pytest.mark.parametrize("way", ["process", "records"])
def test_a_helper_whose_parent_is_killed_exits_instead_of_waiting_forever(
    store: Store, tmp_path: Path, way: str
) -> None:
    """A build killed outright (a hook's timeout, SIGKILL) must not leave its helper
    process behind, waiting forever on a queue and holding the caller's pipes open."""
    import signal
    import subprocess
    import sys
    import time

    (tmp_path / "slowworkers.py").write_text(_SLOW_WORKERS)
    mark = tmp_path / "helper-busy"
    env = {**os.environ, "XB_TEST_MARK": str(mark)}
    parent = subprocess.Popen(
        [sys.executable, "-c", _PARENT, str(tmp_path), str(store.path), way],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while not (mark.exists() and mark.read_text()) and time.monotonic() < deadline:
            assert parent.poll() is None, "the parent ended before its helper started"
            time.sleep(0.05)
        helper = int(mark.read_text())
        assert helper != parent.pid and _state(helper) not in (None, "Z")
    finally:
        parent.send_signal(signal.SIGKILL)
        parent.wait()
    deadline = time.monotonic() + 20
    while _state(helper) not in (None, "Z") and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        assert _state(helper) in (None, "Z"), "the helper outlived its killed parent"
    finally:
        if _state(helper) not in (None, "Z"):
            os.kill(helper, signal.SIGKILL)


_DYING_WORKERS = """
import os, time
from pathlib import Path

class Here:
    def __init__(self, mark):
        self.mark, self.seen = Path(mark), []
    def chunk(self, records, first):
        if not self.seen:  # hold the first chunk until the helper has died mid-build
            deadline = time.monotonic() + 60
            while not self.mark.exists() and time.monotonic() < deadline:
                time.sleep(0.01)
            time.sleep(0.5)  # for the pool to notice
        self.seen.append((first, [record["id"] for record in records]))
    def finish(self):
        return None

class Dies:
    def chunk(self, records, first):
        Path(os.environ["XB_TEST_MARK"]).write_text("gone")
        os._exit(1)  # killed, out of memory: no result, no exception
    def finish(self):
        return None
"""


def test_a_helper_that_dies_midway_leaves_every_chunk_to_the_caller(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An index build shares whole chunks with a helper; when the helper dies with
    chunks still waiting, every one of them — those it had taken and those nobody had
    yet — is done here, each once (a build that lost them would mark an index with a
    fraction of the store as current)."""
    serial = [record["id"] for record in read(store)]
    (tmp_path / "dyingworkers.py").write_text(_DYING_WORKERS)
    monkeypatch.syspath_prepend(str(tmp_path))  # the spawned helper imports it too
    mark = tmp_path / "helper-gone"
    monkeypatch.setenv("XB_TEST_MARK", str(mark))
    import dyingworkers  # type: ignore[import-not-found]

    monkeypatch.setattr(bulk, "PARALLEL_MIN", 1)
    monkeypatch.setattr(bulk, "WORK_CHUNK", 2)
    monkeypatch.setattr(bulk.os, "cpu_count", lambda: 2)
    here = dyingworkers.Here(mark)
    steps: list[int] = []
    with store.core.git() as git:
        view, kind = View(git.snapshot()), resource_kind.KIND.name
        shared, _ = bulk.process(
            git, view, kind, here, dyingworkers.Dies, lambda step, _: steps.append(step)
        )
    assert mark.exists() and shared is False
    assert sum(steps) == len(serial)  # the progress bar ends at its total, not past it
    firsts = [first for first, _ in here.seen]
    assert sorted(firsts) == list(range(0, len(serial), 2))  # every chunk, each once
    assert [rid for _, ids in sorted(here.seen) for rid in ids] == serial


_UNGUARDED = """
import os, sys
from pathlib import Path
with open(os.environ["XB_TEST_MARK"], "a") as runs:  # no __main__ guard, as scripts go
    runs.write(__name__ + "\\n")
from xbrain.core import View, bulk
from xbrain.kinds import resource as resource_kind
from xbrain.store import Store

bulk.PARALLEL_MIN = 1
bulk.WORK_CHUNK = bulk.CHUNK = 4
bulk.os.cpu_count = lambda: 2
started = []
real = bulk._started
bulk._started = lambda pool: started.append(real(pool)) or started[-1]
store = Store(Path(sys.argv[1]), cache_dir=Path(sys.argv[3]))
if sys.argv[2] == "reindex":
    print(store.reindex()["reindexed"])
else:
    with store.core.git() as git:
        print(len(list(bulk.records(git, View(git.snapshot()), resource_kind.KIND.name))))
print(started)
"""


@pytest.mark.parametrize("way", ["reindex", "records"])
def test_a_script_without_a_main_guard_runs_once_and_its_helper_still_helps(
    store: Store, tmp_path: Path, way: str
) -> None:
    """A spawned helper runs its parent's main script again unless told otherwise: a
    script using xbrain without ``if __name__ == "__main__"`` would have run twice (a
    second set of writes, a traceback on stderr when the copy found the store busy) and
    lost its helper. The helper starts without the script and does its share."""
    import subprocess
    import sys

    script, mark = tmp_path / "unguarded.py", tmp_path / "runs"
    script.write_text(_UNGUARDED)
    env = {**os.environ, "XB_TEST_MARK": str(mark)}
    done = subprocess.run(
        [sys.executable, str(script), str(store.path), way, str(store.core.cache_dir)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert mark.read_text().split() == ["__main__"]  # the script ran once, not in the helper
    assert done.stdout.split() == ["23", "[True]"]  # every record, and a helper started
    assert "Traceback" not in done.stderr
