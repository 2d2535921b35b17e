"""Issue 44, skills and rules in daily use: what doctor and remote verify checked per
kind, skills' executable scripts and capsule provenance through export and import,
memex's legacy RETIRED description, case-sensitive keywords, the project registry and
MCP tool profiles. Through a real ``python -m xbrain`` process."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

from tests.conftest import EXAMPLES, Result
from xbrain.schemas import schema_errors

Run = Callable[..., Result]
SKILL = EXAMPLES / "skills" / "deploy-check"
MEMEX = EXAMPLES / "memex"


def test_doctor_and_remote_verify_say_what_they_checked_per_kind(
    xb_proc: Run, tmp_path: Path
) -> None:
    assert xb_proc("put", str(EXAMPLES / "batch.json")).code == 0
    assert xb_proc("skill", "save", str(SKILL)).code == 0
    assert xb_proc("skill", "save", str(EXAMPLES / "skills" / "v2" / "deploy-check")).code == 0
    assert xb_proc("entry", "import", str(MEMEX)).code == 0
    report = xb_proc("doctor")
    assert report.code == 0, report.stderr
    assert schema_errors("doctor-output", report.json) == []
    checked = report.json["checked"]
    assert checked["resources"] == 2 and checked["tombstones"] == 0  # kept as they were
    assert checked["skills"] == 2  # deploy-check and the memex folder's deploy skill
    assert checked["revisions"] == 3 and checked["skillFiles"] == 7
    assert checked["entries"] >= 3 and checked["entryTombstones"] == 0
    assert "summary" in checked
    remote = tmp_path / "backup.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    assert xb_proc("remote", "add", "origin", str(remote)).code == 0
    assert xb_proc("remote", "push").code == 0
    verified = xb_proc("remote", "verify", "origin")
    assert verified.code == 0, verified.stderr
    assert schema_errors("remote-verify-output", verified.json) == []
    assert {k: v for k, v in verified.json["checked"].items() if k != "summary"} == {
        k: v for k, v in checked.items() if k != "summary"
    }
