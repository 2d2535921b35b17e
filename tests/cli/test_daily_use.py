"""Issue 44, skills and rules in daily use: what doctor and remote verify checked per
kind, skills' executable scripts and capsule provenance through export and import,
memex's legacy RETIRED description, case-sensitive keywords and the project registry,
through a real ``python -m xbrain`` process (MCP tool profiles: tests/cli/test_mcp.py;
hostile capsules: tests/security/test_skill_capsule.py)."""

from __future__ import annotations

import json
import shutil
import subprocess
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
from dulwich.repo import Repo

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
    Repo.init_bare(str(remote), mkdir=True, default_branch=b"main").close()
    assert xb_proc("remote", "add", "origin", str(remote)).code == 0
    assert xb_proc("remote", "push").code == 0
    verified = xb_proc("remote", "verify", "origin")
    assert verified.code == 0, verified.stderr
    assert schema_errors("remote-verify-output", verified.json) == []
    # the same records of every kind; how the objects are stored differs (a clone's pack)
    layout = ("summary", "objects")
    assert {k: v for k, v in verified.json["checked"].items() if k not in layout} == {
        k: v for k, v in checked.items() if k not in layout
    }
    assert verified.json["checked"]["objects"]["packs"] >= 1


def _executable_skill(tmp_path: Path) -> Path:
    folder = tmp_path / "work" / "deploy-check"
    shutil.copytree(SKILL, folder)
    (folder / "scripts" / "check.sh").chmod(0o755)
    (folder / "references" / "rollback.md").chmod(0o644)
    return folder


def test_a_scripts_executable_bit_survives_save_export_import_and_entry_export(
    xb_proc: Run, tmp_path: Path
) -> None:
    saved = xb_proc("skill", "save", str(_executable_skill(tmp_path)), "--publish")
    assert saved.code == 0, saved.stderr
    shown = xb_proc("skill", "recall", "--slug", "deploy-check").json
    marks = {item["path"]: item.get("executable") for item in shown["files"]}
    assert marks == {"references/rollback.md": None, "scripts/check.sh": True}
    script = xb_proc(
        "skill",
        "recall",
        "--slug",
        "deploy-check",
        "--revision",
        saved.json["revision_id"],
        "--resource",
        "scripts/check.sh",
    )
    assert schema_errors("skill-component-output", script.json) == []
    assert script.json["executable"] is True
    capsule = tmp_path / "deploy-check.zip"
    assert xb_proc("skill", "export", "deploy-check", str(capsule)).code == 0
    with zipfile.ZipFile(capsule) as archive:
        modes = {info.filename: info.external_attr >> 16 for info in archive.infolist()}
    assert modes["deploy-check/scripts/check.sh"] == 0o100755
    assert modes["deploy-check/references/rollback.md"] == 0o100644
    assert modes["deploy-check/SKILL.md"] == 0o100644
    other = tmp_path / "other"
    imported = xb_proc("skill", "import", str(capsule), store=other)
    assert imported.code == 0, imported.stderr
    assert imported.json["canonical_hash"] == saved.json["canonical_hash"]
    rev = imported.json["revision_id"]  # imported: proposed, read by its revision
    again = xb_proc(
        "skill", "recall", "--slug", "deploy-check", "--revision", rev, store=other
    ).json
    assert {item["path"]: item.get("executable") for item in again["files"]} == marks
    out = tmp_path / "folders"
    assert xb_proc("entry", "export", str(out), store=other).code == 0
    assert (out / "skills/deploy-check/scripts/check.sh").stat().st_mode & 0o777 == 0o700
    assert (out / "skills/deploy-check/references/rollback.md").stat().st_mode & 0o777 == 0o600
    assert xb_proc("doctor", store=other).json["ok"] is True


@pytest.mark.compat
def test_a_git_import_marks_what_git_records_as_executable(xb_proc: Run, tmp_path: Path) -> None:
    if shutil.which("git") is None:
        pytest.skip("the git binary is not installed (make test installs it)")
    repo = tmp_path / "source-repo"
    shutil.copytree(_executable_skill(tmp_path), repo / "deploy-check")
    ident = ["-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(repo), *ident, "commit", "-qm", "skill"], check=True)
    result = xb_proc("skill", "import", str(repo), "--path", "deploy-check")
    assert result.code == 0, result.stderr
    rev = result.json["revision_id"]  # imported: proposed, read by its revision
    shown = xb_proc("skill", "recall", "--slug", "deploy-check", "--revision", rev).json
    marks = {item["path"]: item.get("executable") for item in shown["files"]}
    assert marks == {"references/rollback.md": None, "scripts/check.sh": True}


def test_a_capsule_import_keeps_its_provenance_and_lands_proposed(
    xb_proc: Run, tmp_path: Path
) -> None:
    saved = xb_proc("skill", "save", str(_executable_skill(tmp_path)), "--publish").json
    capsule = tmp_path / "deploy-check.zip"
    assert xb_proc("skill", "export", "deploy-check", str(capsule)).code == 0
    other = tmp_path / "other"
    imported = xb_proc("skill", "import", str(capsule), store=other)
    assert imported.code == 0, imported.stderr
    assert schema_errors("skill-save-output", imported.json) == []
    assert imported.json["state"] == "proposed"  # published there, proposed here
    assert ".xbrain-capsule.json" not in imported.json.get("skipped", [])
    origin = {
        "revision_id": saved["revision_id"],
        "revision_number": 1,
        "created": origin_created(xb_proc),
        "state": "published",
        "status": "active",
        "source": {"type": "save"},
    }
    assert imported.json["origin"] == origin
    log = xb_proc("skill", "log", "deploy-check", store=other)
    assert schema_errors("skill-log-output", log.json) == []
    source = log.json["revisions"][0]["source"]
    assert source == {"type": "capsule", "path": "deploy-check.zip", "origin": origin}
    again = tmp_path / "again.zip"  # a capsule of a capsule keeps the first source
    assert xb_proc("skill", "export", "deploy-check", str(again), store=other).code == 0
    third = xb_proc("skill", "import", str(again), store=tmp_path / "third").json
    assert third["origin"]["source"] == {"type": "save"} and third["origin"]["state"] == "proposed"
    assert xb_proc("doctor", store=tmp_path / "third").json["ok"] is True


def origin_created(xb_proc: Run) -> str:
    created: str = xb_proc("skill", "log", "deploy-check").json["revisions"][0]["created"]
    return created


LEGACY = """---
name: old-deploy-rule
type: rule
description: RETIRED - replaced by the release checklist
queries:
  - how do I deploy the legacy service
---
Deploy the legacy service by hand.
"""


def test_a_legacy_retired_description_is_treated_as_retired(xb_proc: Run, tmp_path: Path) -> None:
    folder = tmp_path / "memex"
    (folder / "rules").mkdir(parents=True)
    (folder / "rules" / "old-deploy-rule.md").write_text(LEGACY)
    assert xb_proc("entry", "import", str(folder)).code == 0
    prompt = "how do I deploy the legacy service"
    assert xb_proc("recall", "-", input=prompt).json["results"] == []
    asked = xb_proc("recall", "-", "--include-retired", input=prompt).json["results"]
    assert [hit["name"] for hit in asked] == ["old-deploy-rule"]
    for args in ((), ("--status", "retired")):  # from the cache, then asked again
        listed = xb_proc("entry", "list", *args).json
        assert schema_errors("entry-list-output", listed) == []
        assert [(e["name"], e["status"]) for e in listed["entries"]] == [
            ("old-deploy-rule", "retired")
        ]
    assert xb_proc("entry", "list", "--status", "active").json["entries"] == []
    assert xb_proc("status").json["entries"]["retired"] == 1
    out = tmp_path / "out"  # the record still says what the file said
    assert xb_proc("entry", "export", str(out)).code == 0
    assert (out / "rules" / "old-deploy-rule.md").read_text() == LEGACY


CASED = """---
name: http-api-rule
type: rule
description: Versioned endpoints only.
keywords:
  - API
caseSensitive: true
---
Call the versioned endpoint.
"""


def test_a_case_sensitive_entrys_keywords_match_in_their_own_case(
    xb_proc: Run, tmp_path: Path
) -> None:
    folder = tmp_path / "memex"
    (folder / "rules").mkdir(parents=True)
    (folder / "rules" / "http-api-rule.md").write_text(CASED)
    loose = CASED.replace("caseSensitive: true\n", "").replace("http-api-rule", "loose-rule")
    (folder / "rules" / "loose-rule.md").write_text(loose)
    assert xb_proc("entry", "import", str(folder)).code == 0
    cased = [e for e in xb_proc("entry", "list").json["entries"] if e["name"] == "http-api-rule"]
    got = xb_proc("entry", "get", cased[0]["id"])
    assert schema_errors("entry-get-output", got.json) == []
    assert got.json["caseSensitive"] is True
    loose_id = next(
        e["id"] for e in xb_proc("entry", "list").json["entries"] if e["name"] == "loose-rule"
    )
    assert "caseSensitive" not in xb_proc("entry", "get", loose_id).json

    def names(prompt: str) -> set[str]:
        result = xb_proc("recall", "-", "--top-k", "5", input=prompt)
        assert result.code == 0, result.stderr
        return {hit["name"] for hit in result.json["results"]}

    assert names("what does the API return") == {"http-api-rule", "loose-rule"}
    assert names("what does the api return") == {"loose-rule"}
    put = dict(got.json, keywords=["Api"], updatedAt="2030-01-01T00:00:00.000Z")
    assert xb_proc("entry", "put", "-", input=json.dumps(put)).code == 0
    assert names("what does the Api return") == {"http-api-rule", "loose-rule"}
    out = tmp_path / "out"
    assert xb_proc("entry", "export", str(out)).code == 0
    assert "caseSensitive: true" in (out / "rules" / "http-api-rule.md").read_text()
    bad = dict(got.json, caseSensitive="yes", updatedAt="2031-01-01T00:00:00.000Z")
    refused = xb_proc("entry", "put", "-", input=json.dumps(bad))
    assert refused.code == 4 and "caseSensitive" in refused.stderr


def test_the_project_registry_lists_the_folders_recall_has_seen(
    xb_proc: Run, tmp_path: Path, store_dir: Path
) -> None:
    assert xb_proc("entry", "import", str(MEMEX)).code == 0
    assert xb_proc("config", "projects").json == {"count": 0, "projects": []}
    app = tmp_path / "work" / "App"
    app.mkdir(parents=True)
    mapped = tmp_path / "mapped"
    mapped.mkdir()
    assert xb_proc("config", f"projects.{mapped}", "team/api").code == 0
    for folder in (app, mapped, app):
        payload = {"prompt": "git push --force?", "session_id": "s", "cwd": str(folder)}
        assert xb_proc("recall", "-", input=json.dumps(payload)).code == 0
    listed = xb_proc("config", "projects")
    assert listed.code == 0, listed.stderr
    assert schema_errors("config-projects-output", listed.json) == []
    found = {row["folder"]: row["project"] for row in listed.json["projects"]}
    assert found == {
        str(app): str(app).replace("/", "-").strip("-").lower(),
        str(mapped): "team/api",
    }
    assert listed.json["count"] == 2
    registry = store_dir / ".git" / "xbrain" / "projects.json"
    assert registry.stat().st_mode & 0o777 == 0o600
    with Repo(str(store_dir)) as repo:  # never committed
        assert not [p for p in repo.open_index() if b"projects.json" in p]
    registry.write_text("{damaged")  # local data: started over, never a failed prompt
    payload = {"prompt": "git push --force?", "session_id": "s", "cwd": str(app)}
    assert xb_proc("recall", "-", input=json.dumps(payload)).code == 0
    assert [row["folder"] for row in xb_proc("config", "projects").json["projects"]] == [str(app)]
