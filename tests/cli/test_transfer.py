"""import-store / export-store: lossless moves to and from the original JSON store."""

from __future__ import annotations

import json
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.conftest import EXAMPLES, Result, head, make, sample

Run = Callable[..., Result]


def canonical(document: dict[str, Any]) -> dict[str, Any]:
    out = json.loads(json.dumps(document))
    out["resources"] = sorted(out["resources"], key=lambda r: r["id"])
    out["tombstones"] = sorted(out["tombstones"], key=lambda t: t["id"])
    return out


def test_import_then_export_is_lossless(xb: Run, tmp_path: Path) -> None:
    source = EXAMPLES / "original-store.json"
    imported = xb("import-store", str(source))
    assert imported.code == 0, imported.stderr
    assert imported.json["resources"] == 1 and imported.json["pending"] == 1
    status = xb("status").json
    assert (status["pendingDistillation"], status["resumableSources"], status["tombstones"]) == (
        1,
        1,
        1,
    )
    out = tmp_path / "exported.json"
    exported = xb("export-store", str(out))
    assert exported.code == 0, exported.stderr
    assert canonical(json.loads(out.read_text())) == canonical(json.loads(source.read_text()))
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert out.read_text().endswith("}\n")


def test_export_import_round_trip_of_a_live_store(
    xb: Run, json_file: Callable[[Any], str], tmp_path: Path
) -> None:
    xb("put", str(EXAMPLES / "batch.json"))
    xb("put", json_file(sample()))
    xb("delete", "resource_e6030e7a46ceae274d1f608ea3873d83ecbb532113359bbcce333adfce358a56")
    first = tmp_path / "first.json"
    xb("export-store", str(first))
    second_store = tmp_path / "second"
    assert xb("import-store", str(first), store=second_store).code == 0
    second = tmp_path / "second.json"
    xb("export-store", str(second), store=second_store)
    assert first.read_bytes() == second.read_bytes()


def test_import_refuses_non_empty_store(
    xb: Run, json_file: Callable[[Any], str], store_dir: Path
) -> None:
    xb("put", json_file(make("mine")))
    before = head(store_dir)
    result = xb("import-store", str(EXAMPLES / "original-store.json"))
    assert result.code == 5
    assert head(store_dir) == before


def test_import_rejects_invalid_files(xb: Run, tmp_path: Path, store_dir: Path) -> None:
    cases = {
        "not json": "Invalid memory store JSON; refusing to overwrite.",
        '{"version": 2, "resources": [], "tombstones": [], "receipts": {}}': "Invalid memory store; refusing to overwrite.",
        json.dumps(
            {"version": 1, "resources": [sample(), sample()], "tombstones": [], "receipts": {}}
        ): "Duplicate resource IDs.",
        json.dumps(
            {"version": 1, "resources": [], "tombstones": [{"id": "x"}], "receipts": {}}
        ): "Invalid or duplicate tombstone.",
        json.dumps(
            {"version": 1, "resources": [], "tombstones": [], "receipts": {"k": {}}}
        ): "Invalid sync receipt.",
        json.dumps(
            {"version": 1, "resources": [], "tombstones": [], "receipts": {}, "ingestion": []}
        ): "Invalid ingestion state.",
    }
    for index, (text, message) in enumerate(cases.items()):
        path = tmp_path / f"bad{index}.json"
        path.write_text(text)
        result = xb("import-store", str(path))
        assert result.stderr == message + "\n", text
        assert result.code == 4
    assert not store_dir.exists()


def test_export_refuses_overwrite_and_inside_store(
    xb: Run, json_file: Callable[[Any], str], tmp_path: Path, store_dir: Path
) -> None:
    xb("put", json_file(sample()))
    target = tmp_path / "out.json"
    target.write_text("keep me")
    assert xb("export-store", str(target)).code == 5
    assert target.read_text() == "keep me"
    assert xb("export-store", str(target), "--force").code == 0
    assert xb("export-store", str(store_dir / "leak.json")).code == 4


def test_force_replaces_a_file_or_a_link_never_a_fifo_or_a_device(xb: Run, tmp_path: Path) -> None:
    """`export-store /dev/full --force`, run as root, replaced the device with a regular
    file; a FIFO was replaced the same way. A link is replaced, never followed."""
    import os

    xb("put", str(EXAMPLES / "batch.json"))
    fifo = tmp_path / "pipe.zip"
    os.mkfifo(fifo)
    for args in (["export-store", str(fifo)], ["skill", "export", "x", str(fifo)]):
        refused = xb(*args, "--force")
        assert refused.code == 4 and "is not a regular file" in refused.stderr
        assert stat.S_ISFIFO(fifo.lstat().st_mode)
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text("mine")
    link = tmp_path / "link.json"
    link.symlink_to(elsewhere)
    assert xb("export-store", str(link), "--force").code == 0
    assert not link.is_symlink() and elsewhere.read_text() == "mine"


def test_an_export_file_may_have_the_longest_name_a_file_system_takes(
    xb: Run, tmp_path: Path
) -> None:
    """Its temporary file's name was the target's plus 14 bytes: past 255, refused."""
    xb("put", str(EXAMPLES / "batch.json"))
    target = tmp_path / ("b" * 250 + ".json")
    exported = xb("export-store", str(target))
    assert exported.code == 0, exported.stderr
    assert len(json.loads(target.read_text())["resources"]) == 2
    assert [path.name for path in tmp_path.iterdir() if path.name.startswith(".")] == []
