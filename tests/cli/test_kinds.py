"""Every kind of memory across the store's features (issue 42): providers are sent
resources and their tombstones only, ``status`` counts every kind, ``export-store``
says what its format cannot hold."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EXAMPLES, ROOT, Result, head
from xbrain.kinds.entry import entry_id
from xbrain.schemas import schema_errors

Run = Callable[..., Result]
ADAPTER = ROOT / "examples" / "mock_adapter.py"
SKILL = EXAMPLES / "skills" / "deploy-check"

# an adapter that logs each request it is sent, then answers as the mock adapter does
LOGGING_ADAPTER = """\
import subprocess, sys
log, data = sys.argv[1], sys.argv[2]
request = sys.stdin.read()
with open(log, "a", encoding="utf-8") as handle:
    handle.write(request.strip() + "\\n")
answer = subprocess.run(
    [sys.executable, {adapter!r}, "--data", data], input=request, capture_output=True, text=True
)
sys.stdout.write(answer.stdout)
sys.exit(answer.returncode)
"""


def skill_copy(tmp_path: Path, name: str, body: str) -> Path:
    target = tmp_path / "skills-work" / name
    target.mkdir(parents=True, exist_ok=True)
    text = (SKILL / "SKILL.md").read_text().replace("deploy-check", name)
    (target / "SKILL.md").write_text(text.split("---\n# ", 1)[0] + "---\n" + body)
    return target


def every_kind(xb: Run, tmp_path: Path, store: Path) -> None:
    """A store with resources and a tombstone, three skills (one with three revisions, one
    archived, one from the memex folder, proposed), four entries (one retired, one deleted:
    an entry tombstone)."""

    def ok(*args: str) -> Result:
        result = xb(*args, store=store)
        assert result.code == 0, (args, result.stderr)
        return result

    ok("put", str(EXAMPLES / "batch.json"))
    first = ok("list").json["results"][0]["id"]
    ok("delete", first)
    for number in (1, 2, 3):
        ok("skill", "save", str(skill_copy(tmp_path, "deploy-check", f"# Step {number}\n")))
    ok("skill", "publish", "deploy-check", "2")
    ok("skill", "deprecate", "deploy-check", "1")
    ok("skill", "save", str(skill_copy(tmp_path, "old-habit", "# Old\n")))
    ok("skill", "archive", "old-habit")
    ok("entry", "import", str(EXAMPLES / "memex"))
    ok("entry", "retire", entry_id("global", "review-checklist"))
    ok("entry", "delete", entry_id("global", "project-notes#Build tips"))


def adapter_config(tmp_path: Path, log: Path, data: Path) -> str:
    script = tmp_path / "logging_adapter.py"
    script.write_text(LOGGING_ADAPTER.format(adapter=str(ADAPTER)))
    value = {
        "kind": "command",
        "scope": "personal",
        "namespace": "tests",
        "command": [sys.executable, str(script), str(log), str(data)],
    }
    path = tmp_path / "command.json"
    path.write_text(json.dumps(value))
    return str(path)


def file_config(tmp_path: Path, target: Path) -> str:
    path = tmp_path / f"file-{target.name}.json"
    path.write_text(json.dumps({"kind": "file", "path": str(target), "scope": "personal"}))
    return str(path)


# -- providers: resources and tombstones only -----------------------------------------------


def test_a_command_adapter_is_sent_resources_and_tombstones_only(
    xb: Run, tmp_path: Path, store_dir: Path
) -> None:
    every_kind(xb, tmp_path, store_dir)
    log = tmp_path / "requests.log"
    cfg = adapter_config(tmp_path, log, tmp_path / "remote.json")
    assert xb("status", "--provider-config", cfg).json["pending"] == 2  # 1 live + 1 tombstone
    synced = xb("sync", "--all", "--provider-config", cfg)
    assert synced.code == 0, synced.stderr
    assert (synced.json["confirmed"], synced.json["failures"]) == (2, [])
    assert synced.json["remoteSync"] == "confirmed_for_selection"
    requests = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["operation"] for r in requests] == ["upsert", "delete"]
    assert all(r["id"].startswith("resource_") for r in requests)
    status = xb("status", "--provider-config", cfg).json
    assert (status["pending"], status["remoteSync"]) == (0, "last_sync_confirmed")
    again = xb("sync", "--all", "--provider-config", cfg)
    assert again.code == 0 and again.json["unchanged"] == 2
    assert len(log.read_text().splitlines()) == 2  # nothing sent again


def test_sync_of_an_entry_id_is_not_a_resource(xb: Run, tmp_path: Path, store_dir: Path) -> None:
    every_kind(xb, tmp_path, store_dir)
    log = tmp_path / "requests.log"
    cfg = adapter_config(tmp_path, log, tmp_path / "remote.json")
    before = head(store_dir)
    for rid in (entry_id("global", "no-force-push"), entry_id("global", "project-notes#部署环境")):
        result = xb("sync", "--id", rid, "--provider-config", cfg)
        assert (result.code, result.stderr) == (3, "Resource not found.\n")
    assert head(store_dir) == before and not log.exists()


@pytest.mark.parametrize("target", ["remote.json", "other-store"])
def test_a_file_provider_syncs_a_store_holding_every_kind(
    xb: Run, tmp_path: Path, store_dir: Path, target: str
) -> None:
    every_kind(xb, tmp_path, store_dir)
    cfg = file_config(tmp_path, tmp_path / target)
    for _ in range(2):  # a later sync --all stays clean too
        synced = xb("sync", "--all", "--provider-config", cfg)
        assert synced.code == 0, synced.stdout + synced.stderr
        assert synced.json["failures"] == [] and synced.json["remoteSync"] != "incomplete"
    assert xb("status", "--provider-config", cfg).json["pending"] == 0
    if target == "remote.json":
        document = json.loads((tmp_path / target).read_text())
        assert len(document["resources"]) == 1
        assert all(r["id"].startswith("resource_") for r in document["resources"])
    else:
        other = xb("status", store=tmp_path / target).json
        assert other["resources"] == 1
        assert other["entries"]["active"] == 0 and other["skills"]["active"] == 0


# -- status counts every kind ---------------------------------------------------------------


def test_status_counts_every_kind(xb: Run, tmp_path: Path, store_dir: Path) -> None:
    empty = xb("status")
    assert empty.code == 0 and schema_errors("status-output", empty.json) == []
    assert empty.json["skills"]["active"] == 0 and empty.json["entries"]["active"] == 0
    every_kind(xb, tmp_path, store_dir)
    status = xb("status").json
    assert schema_errors("status-output", status) == []
    assert (status["resources"], status["tombstones"]) == (1, 1)
    assert status["skills"] == {
        "active": 2,
        "archived": 1,
        "revisions": {"draft": 2, "proposed": 1, "published": 1, "deprecated": 1},
    }
    entries: dict[str, Any] = status["entries"]
    assert (entries["active"], entries["retired"]) == (2, 1)
    assert entries["kinds"]["rule"] == {"active": 1, "retired": 1, "proposed": 0}
    assert entries["kinds"]["memory"] == {"active": 1, "retired": 0, "proposed": 0}
    assert sum(sum(k.values()) for k in entries["kinds"].values()) == 3
    # a proposal awaiting review is counted as one (it made status crash)
    proposal = {"kind": "memory", "name": "maybe", "description": "x", "status": "proposed"}
    assert xb("entry", "put", "-", input=json.dumps(proposal)).code == 0
    counted = xb("status").json
    assert schema_errors("status-output", counted) == []
    assert counted["entries"]["proposed"] == 1
    assert counted["entries"]["kinds"]["memory"]["proposed"] == 1
    assert status["entryTombstones"] == 1
    # pending counts what a provider would be sent, and says which kinds those are
    assert (status["provider"], status["pending"]) == (None, 2)
    assert status["pendingKinds"] == ["resource", "tombstone"]


# -- export-store says what the original format cannot hold ---------------------------------


def test_export_store_counts_and_names_what_it_leaves_out(
    xb: Run, tmp_path: Path, store_dir: Path
) -> None:
    every_kind(xb, tmp_path, store_dir)
    out = tmp_path / "export.json"
    exported = xb("export-store", str(out))
    assert exported.code == 0, exported.stderr
    assert schema_errors("export-store-output", exported.json) == []
    assert exported.json["omitted"] == {"skills": 3, "entries": 3, "entryTombstones": 1}
    assert exported.stderr == (
        "Left out 3 skills, 3 entries, 1 entry tombstone: the original format holds only "
        "resources and tombstones; back up everything with xbrain backup create FILE.\n"
    )
    document = json.loads(out.read_text())
    assert (len(document["resources"]), len(document["tombstones"])) == (1, 1)
    # a store of resources alone loses nothing, and says nothing
    plain = tmp_path / "plain"
    assert xb("put", str(EXAMPLES / "batch.json"), store=plain).code == 0
    alone = xb("export-store", str(tmp_path / "plain.json"), store=plain)
    assert (alone.code, alone.stderr) == (0, "")
    assert alone.json["omitted"] == {"skills": 0, "entries": 0, "entryTombstones": 0}


# -- backup create / clone FILE: every kind, full fidelity ---------------------------------


def git_out(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
    ).stdout


@pytest.mark.skipif(shutil.which("git") is None, reason="the git binary is needed")
def test_a_backup_bundle_restores_every_file_of_the_store(
    xb: Run, xb_proc: Run, tmp_path: Path, store_dir: Path
) -> None:
    every_kind(xb, tmp_path, store_dir)
    bundle = tmp_path / "backups" / "store.bundle"  # a folder made for it, private
    made = xb_proc("backup", "create", str(bundle))
    assert made.code == 0, made.stderr
    assert bundle.parent.stat().st_mode & 0o777 == 0o700
    assert schema_errors("backup-create-output", made.json) == []
    assert made.json["commit"] == head(store_dir) and made.json["bytes"] == bundle.stat().st_size
    assert bundle.stat().st_mode & 0o777 == 0o600
    assert xb_proc("backup", "create", str(bundle)).code == 5  # never over a file unasked
    assert xb_proc("backup", "create", str(bundle), "--force").code == 0
    restored = tmp_path / "restored"
    cloned = xb_proc("clone", str(bundle), str(restored), store=None)
    assert cloned.code == 0, cloned.stderr
    tree = git_out(store_dir, "ls-tree", "-r", "main")
    assert "skills/deploy-check/revisions/" in tree and "entry-tombstones/" in tree
    assert git_out(restored, "ls-tree", "-r", "main") == tree  # every file, byte for byte
    assert git_out(restored, "rev-list", "main") == git_out(store_dir, "rev-list", "main")
    assert git_out(restored, "remote") == ""  # a bundle is no remote to pull from
    mine, theirs = xb("status").json, xb("status", store=restored).json
    for key in ("resources", "tombstones", "skills", "entries", "entryTombstones"):
        assert theirs[key] == mine[key]
    assert xb("doctor", store=restored).code == 0
    # plain git reads the bundle too
    subprocess.run(["git", "clone", "-q", str(bundle), str(tmp_path / "by-git")], check=True)
    assert git_out(tmp_path / "by-git", "ls-tree", "-r", "HEAD") == tree


def test_the_summary_keeps_one_order_whatever_order_kinds_arrive_in(
    xb: Run, store_dir: Path
) -> None:
    """The last entry deleted, then a new one: the summary's keys in their one order, so
    doctor (which compares bytes) finds nothing to repair."""
    first = {"kind": "rule", "name": "first", "body": "First rule."}
    assert xb("entry", "put", "-", input=first).code == 0
    assert xb("entry", "delete", entry_id("global", "first")).code == 0
    second = {"kind": "rule", "name": "second", "body": "Second rule."}
    assert xb("entry", "put", "-", input=second).code == 0
    doctor = xb("doctor")
    assert doctor.code == 0, doctor.stdout
    summary = json.loads((store_dir / "index" / "summary.json").read_text())
    assert list(summary) == ["resources", "tombstones", "entries", "entryTombstones", "bytes"]
