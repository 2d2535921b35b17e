"""The detached pack merge leaves nothing of the process that started it to reap: a
write that hands a merge to ``python -m xbrain.git.upkeep`` and exits (a CLI, a test
run, a script) used to end with ``ResourceWarning: subprocess N is still running``
(the merge's ``Popen`` object, dropped while it ran)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.cli.test_packs import pack_files, wait_for_upkeep

SCRIPT = """
import sys
from tests.conftest import make
from xbrain.git import packs
from xbrain.store import Store

packs._INLINE_MAX = 0  # every merge detached
store = Store(sys.argv[1])
for b in range(4):
    store.put([make(f"r{b}-{i}", text=f"words {b} {i}") for i in range(70)])
"""


def test_a_write_that_detaches_a_merge_leaves_no_resource_warning(store_dir: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-W", "error::ResourceWarning", "-X", "dev", "-c", SCRIPT, str(store_dir)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=Path(__file__).parents[2],
    )
    wait_for_upkeep(store_dir)
    assert proc.returncode == 0, proc.stderr
    assert "ResourceWarning" not in proc.stderr and "still running" not in proc.stderr, proc.stderr
    assert len(pack_files(store_dir)) <= 2  # the detached merges ran
