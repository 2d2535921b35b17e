"""schema/: every schema is valid, every example validates, every CLI output validates."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from tests.conftest import EXAMPLES, ROOT, Result
from xbrain.codec import dump_yaml, load_yaml
from xbrain.kinds.model import normalize_resource
from xbrain.schemas import inline_schema, schema_dir, schema_errors

Run = Callable[..., Result]
ID = "resource_e6030e7a46ceae274d1f608ea3873d83ecbb532113359bbcce333adfce358a56"


def test_schema_dir_is_the_repository_schema_folder() -> None:
    assert (
        schema_dir().resolve() == (ROOT / "schema").resolve()
        or (schema_dir() / "resource.schema.json").exists()
    )


@pytest.mark.parametrize(
    "path", sorted((ROOT / "schema").glob("*.schema.json")), ids=lambda p: p.name
)
def test_schemas_are_valid_draft_2020_12(path: Path) -> None:
    Draft202012Validator.check_schema(json.loads(path.read_text()))


EXAMPLE_SCHEMAS = {
    "synthetic-resource.json": "put-input",
    "batch.json": "put-input",
    "analysis.json": "analyze-input",
    "original-store.json": "original-store",
    "provider-file.json": "provider-config",
    "provider-command.json": "provider-config",
    "bookmarks.json": "bookmark-file",
    "source-config.json": "source-config",
}


def test_every_example_is_covered() -> None:
    data_only = {"source-items.json"}  # the mock source's data, checked by its adapter
    assert {p.name for p in EXAMPLES.glob("*.json")} - data_only == set(EXAMPLE_SCHEMAS)


@pytest.mark.parametrize(("name", "schema"), sorted(EXAMPLE_SCHEMAS.items()))
def test_examples_validate(name: str, schema: str) -> None:
    assert schema_errors(schema, json.loads((EXAMPLES / name).read_text())) == []


@pytest.mark.parametrize("name", ["synthetic-resource.json", "batch.json"])
def test_example_resources_round_trip(name: str) -> None:
    data = json.loads((EXAMPLES / name).read_text())
    for item in data if isinstance(data, list) else [data]:
        resource = normalize_resource(item).resource
        assert schema_errors("resource", resource) == []
        assert load_yaml(dump_yaml(resource)) == resource
        assert normalize_resource(resource).resource == resource


def test_invalid_resource_is_caught_by_schema() -> None:
    assert schema_errors("resource", {"id": "nope"})


def validate(result: Result, schema: str) -> Any:
    assert result.code == 0, result.stderr
    data = result.json
    assert schema_errors(schema, data) == [], data
    assert Draft202012Validator(inline_schema(schema)).is_valid(data)  # what MCP clients get
    return data


@pytest.mark.parametrize(
    "path", sorted((ROOT / "schema").glob("*.schema.json")), ids=lambda p: p.name
)
def test_inlined_schemas_are_self_contained(path: Path) -> None:
    inlined = inline_schema(path.name.removesuffix(".schema.json"))
    assert "$ref" not in json.dumps(inlined) and "$defs" not in inlined
    Draft202012Validator.check_schema(inlined)


def mutations(value: Any) -> list[Any]:
    """The value with each top-level field (of it, or of its first item) removed or mistyped."""
    if isinstance(value, list):
        return [[first, *value[1:]] for first in mutations(value[0])]
    out: list[Any] = []
    for key in value:
        out.append({k: v for k, v in value.items() if k != key})
        out += [{**value, key: wrong} for wrong in (12345, None, "x", [])]
    return out


@pytest.mark.parametrize(("name", "schema"), sorted(EXAMPLE_SCHEMAS.items()))
def test_inlined_schemas_judge_like_the_originals(name: str, schema: str) -> None:
    inlined = Draft202012Validator(inline_schema(schema))
    example = json.loads((EXAMPLES / name).read_text())
    verdicts = [
        (inlined.is_valid(case), schema_errors(schema, case) == [])
        for case in [example, *mutations(example)]
    ]
    assert all(a == b for a, b in verdicts)
    assert (True, True) in verdicts and (False, False) in verdicts


def test_cli_outputs_match_schemas(xb: Run, tmp_path: Path) -> None:
    validate(xb("init"), "init-output")
    validate(xb("put", str(EXAMPLES / "synthetic-resource.json")), "put-output")
    validate(xb("put", str(EXAMPLES / "batch.json")), "put-output")
    validate(xb("get", ID), "get-output")
    validate(xb("inspect", ID), "inspect-output")
    validate(xb("analyze", str(EXAMPLES / "analysis.json")), "analyze-output")
    validate(xb("status"), "status-output")
    validate(xb("doctor"), "doctor-output")
    validate(xb("search", "keyboard dialog"), "search-output")
    validate(xb("search", "", "--domain", "web-ui"), "search-output")
    validate(xb("reindex"), "reindex-output")
    validate(xb("config"), "config-output")
    cfg = tmp_path / "provider.json"
    cfg.write_text(
        json.dumps({"kind": "file", "scope": "personal", "path": str(tmp_path / "remote.json")})
    )
    validate(xb("sync", "--all", "--provider-config", str(cfg)), "sync-output")
    validate(xb("status", "--provider-config", str(cfg)), "status-output")
    validate(xb("search", "keyboard", "--provider-config", str(cfg)), "search-output")
    validate(xb("delete", ID), "delete-output")
    validate(xb("delete", ID), "delete-output")
    out = tmp_path / "export.json"
    validate(xb("export-store", str(out)), "export-store-output")
    assert schema_errors("original-store", json.loads(out.read_text())) == []
    validate(xb("import-store", str(out), store=tmp_path / "copy"), "import-store-output")


def test_skill_outputs_match_schemas(xb: Run, tmp_path: Path) -> None:
    skill = EXAMPLES / "skills" / "deploy-check"
    validate(xb("skill", "save", str(skill)), "skill-save-output")
    validate(xb("skill", "save", str(skill), "--publish"), "skill-save-output")
    validate(xb("skill", "import", str(skill), store=tmp_path / "other"), "skill-save-output")
    validate(xb("skill", "list"), "skill-list-output")
    validate(xb("skill", "recall", "deploy"), "skill-recall-output")
    validate(xb("skill", "recall", "--slug", "deploy-check"), "skill-show-output")
    validate(
        xb(
            "skill",
            "recall",
            "--slug",
            "deploy-check",
            "--revision",
            "1",
            "--resource",
            "scripts/check.sh",
        ),
        "skill-component-output",
    )
    validate(xb("skill", "log", "deploy-check"), "skill-log-output")
    validate(xb("skill", "diff", "deploy-check", "1", "1"), "skill-diff-output")
    validate(xb("skill", "deprecate", "deploy-check", "1"), "skill-lifecycle-output")
    validate(xb("skill", "archive", "deploy-check"), "skill-lifecycle-output")
    validate(xb("skill", "restore", "deploy-check", "1"), "skill-save-output")
    validate(xb("skill", "export", "deploy-check", str(tmp_path / "s.zip")), "skill-export-output")
    changed = tmp_path / "changed"
    import shutil

    shutil.copytree(skill, changed)
    (changed / "SKILL.md").write_text((skill / "SKILL.md").read_text() + "More.\n")
    (changed / "assets").mkdir()
    (changed / "assets" / "x.bin").write_bytes(b"\xff\xfe")
    validate(xb("skill", "save", str(changed)), "skill-save-output")
    found = validate(xb("skill", "diff", "deploy-check", "1", "2"), "skill-diff-output")
    for form in ("ops", "hunks"):
        validate(
            xb("skill", "diff", "deploy-check", "1", "2", "--format", form), "skill-diff-output"
        )
    assert {f["status"] for f in found["files"]} == {"added", "modified", "unchanged"}
