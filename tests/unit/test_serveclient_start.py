"""The served hook's client loads as little as it can: its socket's name is two
checksums of the store's real path, computed here rather than by ``zlib``, whose shared
library took longer to load (0.2-0.3 ms on every prompt) than the checksums take."""

from __future__ import annotations

import os
import subprocess
import sys
import zlib
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from xbrain import serveclient

ROOT = Path(__file__).resolve().parents[2]


def test_the_client_names_a_stores_socket_without_loading_zlib(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from xbrain.serveclient import socket_path\n"
        f"print(socket_path({str(tmp_path)!r}), 'zlib' in sys.modules)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "XDG_RUNTIME_DIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    path, loaded = done.stdout.split()
    real = os.fsencode(os.path.realpath(tmp_path))
    name = f"{zlib.crc32(real):08x}{zlib.adler32(real):08x}.sock"  # as every version named it
    assert path == os.path.join(str(tmp_path), "xbrain", name) and loaded == "False"


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=600))
def test_the_checksums_are_zlibs(data: bytes) -> None:
    real = os.fsencode(os.path.realpath(os.fsdecode(b"/" + data.replace(b"\0", b"")[:200])))
    name = os.path.basename(serveclient.socket_path(os.fsdecode(real)))
    assert name == f"{zlib.crc32(real):08x}{zlib.adler32(real):08x}.sock"
