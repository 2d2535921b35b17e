"""A server started from a folder never imports that folder's code. ``python -m`` puts
the folder it starts in first on the import path, and the hook (which starts the warm
server) runs in the agent's project: a ``numpy.py`` or an ``xbrain/`` planted there
would have been the server's own code — and its helper processes'."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import make

pytestmark = pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="Unix sockets only")
CONSOLE = Path(sys.executable).with_name("xbrain")  # the console script: no folder on its path


@pytest.fixture
def runtime() -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="xbi"))  # short: socket paths are bounded
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.skipif(not CONSOLE.exists(), reason="the xbrain console script is not installed")
def test_a_detached_server_ignores_modules_planted_where_it_is_started(
    tmp_path: Path, runtime: Path
) -> None:
    project = tmp_path / "project"
    marker = tmp_path / "imported"
    (project / "xbrain").mkdir(parents=True)
    for module in (project / "numpy.py", project / "xbrain" / "__init__.py"):
        module.write_text(f"open({str(marker)!r}, 'a').write({module.name!r})\n")
    store = tmp_path / "store"
    items = tmp_path / "items.json"
    items.write_text(json.dumps([make(f"r-{i}", title=f"backup host {i}") for i in range(30)]))
    env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime), "XBRAIN_STORE": str(store)}

    def xbrain(*args: str) -> subprocess.CompletedProcess[str]:
        command = [str(CONSOLE), *args]
        return subprocess.run(command, cwd=project, env=env, capture_output=True, text=True)

    assert xbrain("put", str(items)).returncode == 0
    started = xbrain("serve", "--detach", "--idle", "60")
    assert started.returncode == 0, started.stderr
    try:
        assert json.loads(started.stdout)["detached"] is True
        # a served batch: the conflict walk loads numpy (and may start a helper)
        batch = [make(f"n-{i}", title=f"backup host {i} copy") for i in range(30)]
        items.write_text(json.dumps(batch))
        put = xbrain("put", str(items))
        assert put.returncode == 0, put.stderr
        assert json.loads(put.stdout)["added"] == 30
    finally:
        xbrain("serve", "--stop")
    assert not marker.exists(), marker.read_text()
