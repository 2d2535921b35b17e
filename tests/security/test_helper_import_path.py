"""A big read's helper process (``core/bulk``: reindex, a big index build) never imports
the folder it was started in. multiprocessing starts it, and its resource tracker, as
``python -c …``, which puts the current directory first on the import path: a
``multiprocessing/`` planted in the folder a reindex runs in was their first import."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import make
from xbrain.core import View, bulk
from xbrain.kinds import resource as resource_kind
from xbrain.store import Store


@pytest.mark.skipif(sys.version_info < (3, 11), reason="PYTHONSAFEPATH is Python 3.11's")
def test_a_bulk_read_s_helper_ignores_a_package_planted_where_it_runs(
    tmp_path: Path, segment_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store(tmp_path / "store", cache_dir=segment_cache)
    store.put([make(f"b{i}") for i in range(5)])
    planted = tmp_path / "work" / "multiprocessing"
    planted.mkdir(parents=True)
    marker = tmp_path / "imported"
    (planted / "__init__.py").write_text(f"open({str(marker)!r}, 'w').write('planted')\n")
    monkeypatch.chdir(planted.parent)
    monkeypatch.setattr(bulk, "PARALLEL_MIN", 1)
    monkeypatch.setattr(bulk.os, "cpu_count", lambda: 2)
    started: list[bool] = []
    real = bulk._started

    def spy(pool: Any) -> bool:
        started.append(real(pool))
        return started[-1]

    monkeypatch.setattr(bulk, "_started", spy)
    before = os.environ.get("PYTHONSAFEPATH")
    with store.core.git() as git:
        got = list(bulk.records(git, View(git.snapshot()), resource_kind.KIND.name))
    assert started == [True]  # the helper process read them
    assert len(got) == 5
    assert not marker.exists()
    assert os.environ.get("PYTHONSAFEPATH") == before  # the caller's left as it was
