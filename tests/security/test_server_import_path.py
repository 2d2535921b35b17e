"""A server started from a folder never imports that folder's code. ``python -m`` puts
the folder it starts in first on the import path, and the hook (which starts the warm
server) runs in the agent's project: a ``numpy.py`` or an ``xbrain/`` planted there
would have been the server's own code — and its helper processes'."""

from __future__ import annotations

import io
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


def test_every_background_python_starts_in_the_root_folder_with_absolute_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The warm build a hook starts, the detached pack merge and the auto-started server
    all run ``python -m`` from ``/``, their store named by an absolute path (a relative
    one would now point elsewhere)."""
    from xbrain import autoserve
    from xbrain.git import upkeeplock
    from xbrain.recall import warm

    started: list[tuple[list[str], object]] = []

    class Recorded:
        def __init__(self, argv: list[str], **kwargs: object) -> None:
            started.append((list(argv), kwargs.get("cwd")))
            self.stdin = io.BytesIO()  # what the warm build writes its prompt to

    monkeypatch.chdir(tmp_path)
    (tmp_path / "store" / ".git" / "xbrain").mkdir(parents=True)
    monkeypatch.setattr(subprocess, "Popen", Recorded)
    monkeypatch.setattr(warm, "behind", lambda control: True)
    assert warm.start(Path("store"))
    monkeypatch.setattr(autoserve, "_listening", lambda store: False)
    assert autoserve.start("store")
    monkeypatch.setattr(subprocess, "run", lambda argv, **kw: started.append((argv, kw["cwd"])))
    upkeeplock.detach([sys.executable, "-m", "xbrain.git.upkeep", "x"], 0)
    assert [cwd for _, cwd in started] == [os.sep] * 3
    assert str(tmp_path / "store") in started[0][0] and str(tmp_path / "store") in started[1][0]
