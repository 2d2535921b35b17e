"""An export's ``.xbrain-capsule.json`` on ``skill import`` is input from outside
(issue 44 item 11): one that is too big, not JSON, off its schema, or describing other
files than the archive holds is ignored with a warning (the import goes on as a plain
ZIP, landing proposed), and a secret in a URL it carries never reaches the store."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EXAMPLES, Result

Run = Callable[..., Result]
EXAMPLE = EXAMPLES / "skills" / "deploy-check"


def _exported(xb: Run, tmp_path: Path) -> tuple[dict[str, bytes], dict[str, Any]]:
    assert xb("skill", "save", str(EXAMPLE), "--publish", store=tmp_path / "a").code == 0
    out = tmp_path / "a.zip"
    assert xb("skill", "export", "deploy-check", str(out), store=tmp_path / "a").code == 0
    with zipfile.ZipFile(out) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    capsule = json.loads(members.pop("deploy-check/.xbrain-capsule.json"))
    return members, capsule


def _zip(members: dict[str, bytes], capsule: bytes) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in {**members, "deploy-check/.xbrain-capsule.json": capsule}.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def _changed(capsule: dict[str, Any], **changes: Any) -> bytes:
    return json.dumps({**capsule, **changes}).encode()


@pytest.mark.parametrize(
    "case", ["too-big", "not-json", "extra-key", "bad-state", "other-hash", "other-slug", "list"]
)
def test_a_bad_capsule_is_ignored_with_a_warning(xb: Run, tmp_path: Path, case: str) -> None:
    members, capsule = _exported(xb, tmp_path)
    bad = {
        "too-big": _changed(capsule, note="x" * 70_000),
        "not-json": b"{not json",
        "extra-key": _changed(capsule, trusted=True),
        "bad-state": _changed(capsule, state="owned"),
        "other-hash": _changed(capsule, canonical_hash="sha256:" + "0" * 64),
        "other-slug": _changed(capsule, slug="other-skill"),
        "list": b"[]",
    }[case]
    archive = tmp_path / "in.zip"
    archive.write_bytes(_zip(members, bad))
    result = xb("skill", "import", str(archive))
    assert result.code == 0, result.stderr
    assert result.json["state"] == "proposed" and "origin" not in result.json
    assert any(".xbrain-capsule.json ignored" in w for w in result.json["warnings"])
    source = xb("skill", "log", "deploy-check").json["revisions"][0]["source"]
    assert source == {"type": "zip", "path": "in.zip"}
    assert xb("doctor").json["ok"] is True


def test_a_capsules_url_is_redacted_and_a_nested_origin_is_flattened(
    xb: Run, tmp_path: Path
) -> None:
    members, capsule = _exported(xb, tmp_path)
    secret = "https://user:hunter2-secret@example.invalid/skills.git"
    first = {"type": "git", "url": secret, "commit": "a" * 40}
    origin = {
        "revision_id": capsule["revision_id"],
        "revision_number": 1,
        "created": capsule["created"],
        "state": "published",
        "status": "active",
        "source": first,
    }
    nested = _changed(capsule, source={"type": "capsule", "origin": origin})
    archive = tmp_path / "in.zip"
    archive.write_bytes(_zip(members, nested))
    result = xb("skill", "import", str(archive))
    assert result.code == 0, result.stderr
    assert "hunter2" not in result.stdout
    kept = xb("skill", "log", "deploy-check").json["revisions"][0]["source"]["origin"]["source"]
    assert kept["type"] == "git" and kept["commit"] == "a" * 40
    assert "hunter2" not in kept["url"]
    stored = list((tmp_path / "store").rglob("revision.yaml"))
    assert stored and all(b"hunter2" not in path.read_bytes() for path in stored)
