"""The lock a fresh process takes to start ``xbrain serve`` (autoserve) is never followed
out of the store: a symlink in its place means no server, and nothing written where it
points."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, Result

pytest.importorskip("numpy", reason="the semantic extra is not installed")


def test_a_symlinked_serve_lock_is_not_followed(
    xb: Callable[..., Result], store_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert xb("entry", "import", str(EXAMPLES / "memex")).code == 0
    assert xb("reindex", "--semantic", "--provider", "hashing").code == 0
    outside = tmp_path / "outside"
    (store_dir / ".git" / "xbrain" / "serve.lock").symlink_to(outside)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "run"))
    monkeypatch.delenv("XBRAIN_SERVE_AUTO")
    from xbrain import autoserve

    assert autoserve.wanted(store_dir) is True
    assert autoserve.start(store_dir) is False
    assert not outside.exists() and not (tmp_path / "run").exists()
    answer = xb("recall", "-", input="can I git push --force to main?")
    assert answer.code == 0 and json.loads(answer.stdout)["results"]
