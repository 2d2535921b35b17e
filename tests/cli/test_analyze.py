"""inspect / analyze and the design lifecycle through the CLI (reference §7.3–7.4)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.conftest import EXAMPLES, Result, head, sample, snapshot_files

Run = Callable[..., Result]
ID = "resource_e6030e7a46ceae274d1f608ea3873d83ecbb532113359bbcce333adfce358a56"


def analysis() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((EXAMPLES / "analysis.json").read_text())
    return data


def test_inspect_then_analyze(xb: Run, json_file: Callable[[Any], str]) -> None:
    xb("put", json_file(sample()))
    inspected = xb("inspect", ID).json
    assert (
        inspected["resourceRevision"]
        == "5069de4b5bad2811e72ce4195b2eceefcf15b35de063cfe59f47400219527712"
    )
    result = xb("analyze", str(EXAMPLES / "analysis.json"))
    assert result.code == 0, result.stderr
    assert result.json["updated"] == 1 and result.json["analysis"] == "analyzed"
    resource = xb("get", ID).json
    assert resource["design"]["status"] == "analyzed"
    assert resource["updatedAt"] > "2026-10-07T00:00:00.000Z"
    assert list(resource)[-1] == "design"


def test_analyze_guarded_by_revision(
    xb: Run, json_file: Callable[[Any], str], store_dir: Path
) -> None:
    xb("put", json_file(sample()))
    xb("put", json_file(sample(title="Edited", updatedAt="2026-10-08T00:00:00Z")))
    before = snapshot_files(store_dir)
    result = xb("analyze", str(EXAMPLES / "analysis.json"))
    assert (result.code, result.stderr) == (
        5,
        "Stale analysis; re-read the resource and inspect its images.\n",
    )
    assert snapshot_files(store_dir) == before


def test_analyze_input_errors(xb: Run, json_file: Callable[[Any], str], store_dir: Path) -> None:
    xb("put", json_file(sample()))
    before = head(store_dir)
    missing = xb("analyze", json_file({"id": ID}))
    assert (
        missing.stderr == "Analysis requires id and resourceRevision from the current resource.\n"
    )
    assert missing.code == 4
    bad_design = xb("analyze", json_file({**analysis(), "design": {"status": "nope"}}))
    assert bad_design.stderr == "Invalid design status.\n"
    unknown = xb("analyze", json_file({**analysis(), "id": "resource_" + "b" * 64}))
    assert unknown.code == 3
    assert head(store_dir) == before


def test_resubmitting_same_design_still_updates(xb: Run, json_file: Callable[[Any], str]) -> None:
    xb("put", json_file(sample()))
    xb("analyze", str(EXAMPLES / "analysis.json"))
    revision = xb("inspect", ID).json["resourceRevision"]
    again = xb("analyze", json_file({**analysis(), "resourceRevision": revision}))
    assert again.json["updated"] == 1


def test_put_without_design_keeps_it_and_marks_stale(
    xb: Run, json_file: Callable[[Any], str]
) -> None:
    xb("put", json_file(sample()))
    xb("analyze", str(EXAMPLES / "analysis.json"))
    current = xb("get", ID).json
    later = "2027-01-01T00:00:00Z"
    xb("put", json_file(sample(title="Retitled", updatedAt=later)))
    kept = xb("get", ID).json["design"]
    assert kept == current["design"]  # title change: design kept as is
    xb("put", json_file(sample(text="New text", updatedAt="2027-01-02T00:00:00Z")))
    stale = xb("get", ID).json["design"]
    assert stale["status"] == "stale"
    assert stale["reason"] == "Source changed; inspect images again."
    assert stale["features"] == current["design"]["features"]
