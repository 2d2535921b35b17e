"""Team layers in every read (issue 47): search, recall, skill recall, list, get, hooks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EXAMPLES, Result, make
from xbrain.kinds.entry import entry_id
from xbrain.kinds.model import resource_id
from xbrain.schemas import schema_errors

Run = Callable[..., Result]
MEMORY = entry_id("global", "project-notes#Build tips")
DIALOG = resource_id("web", "fictional-dialog-guide")
MINE = "a personal dialog note"


def draft_skill(tmp_path: Path) -> Path:
    folder = tmp_path / "draft-runbook"
    folder.mkdir()
    (folder / "SKILL.md").write_text(
        "---\nname: draft-runbook\ndescription: Rotate the database credentials safely "
        "before a release\n---\n\nRotate the database credentials, then restart.\n"
    )
    return folder


@pytest.fixture
def team(xb: Run, tmp_path: Path) -> Path:
    """A team repository with entries, a published and a draft skill and a resource,
    added as team ``eng``; the maker's store stays at tmp_path/maker."""
    from dulwich.repo import Repo

    bare = tmp_path / "team.git"
    Repo.init_bare(str(bare), mkdir=True, default_branch=b"main").close()
    maker = tmp_path / "maker"
    assert xb("config", "identity.name", "Mia Maker", store=maker).code == 0
    assert xb("config", "identity.email", "mia@example.org", store=maker).code == 0
    assert xb("entry", "import", str(EXAMPLES / "memex"), store=maker).code == 0
    deploy = str(EXAMPLES / "skills" / "deploy-check")
    assert xb("skill", "save", deploy, "--publish", store=maker).code == 0
    assert xb("skill", "save", str(draft_skill(tmp_path)), store=maker).code == 0
    assert xb("put", str(EXAMPLES / "synthetic-resource.json"), store=maker).code == 0
    assert xb("remote", "add", "origin", str(bare), store=maker).code == 0
    assert xb("remote", "push", store=maker).code == 0
    added = xb("team", "add", "eng", str(bare), store=None)
    assert added.code == 0, added.stderr
    return bare


def personal(xb: Run, tmp_path: Path) -> None:
    mine = make("personal-dialog", title=MINE)
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(mine))
    assert xb("put", str(path)).code == 0


def check(schema: str, value: Any) -> Any:
    assert schema_errors(schema, value) == []
    return value


def test_search_and_list_read_every_layer(
    xb_proc: Run, xb: Run, team: Path, tmp_path: Path
) -> None:
    personal(xb, tmp_path)
    found = check("search-output", xb_proc("search", "accessible dialog").json)["results"]
    layers = {r["citation"]["id"]: r for r in found}
    assert layers[DIALOG]["layer"] == "team:eng" and layers[DIALOG]["trust"] == "team"
    assert layers[DIALOG]["provenance"]["committer"] == "Mia Maker <mia@example.org>"
    assert [r["layer"] for r in found if r["citation"]["id"] != DIALOG] == ["personal"]
    brief = xb("search", "accessible dialog", "--brief").json["results"]
    assert {r["layer"] for r in brief} == {"personal", "team:eng"}
    for run in (xb, xb_proc):  # click's command and the light path
        listed = check("list-output", run("list").json)
        assert listed["total"] == 2
        assert {(r["id"], r["layer"]) for r in listed["results"]} >= {(DIALOG, "team:eng")}
    got = check("get-output", xb_proc("get", DIALOG).json)
    assert got["layer"] == "team:eng" and got["resource"]["id"] == DIALOG
    assert got["provenance"]["committer"] == "Mia Maker <mia@example.org>"


def test_a_personal_record_wins_over_the_teams_with_the_same_id(
    xb_proc: Run, xb: Run, team: Path
) -> None:
    assert xb("put", str(EXAMPLES / "synthetic-resource.json")).code == 0
    found = xb_proc("search", "accessible dialog").json["results"]
    assert [(r["citation"]["id"], r["layer"]) for r in found] == [(DIALOG, "personal")]
    listed = xb_proc("list").json
    assert listed["total"] == 1 and listed["results"][0]["layer"] == "personal"
    assert "layer" not in xb_proc("get", DIALOG).json  # yours, as always
    recalled = xb_proc("recall", "-", input="keyboard focus in an accessible React dialog")
    hits = [r for r in recalled.json["results"] if r["id"] == DIALOG]
    assert [r["layer"] for r in hits] == ["personal"]


def test_recall_and_skill_recall_read_published_team_skills_only(
    xb_proc: Run, xb: Run, team: Path
) -> None:
    recalled = check("recall-output", xb_proc("recall", "-", input="build tips: make -j2?").json)
    memory = [r for r in recalled["results"] if r["id"] == MEMORY]
    assert memory and memory[0]["layer"] == "team:eng" and memory[0]["trust"] == "team"
    assert memory[0]["provenance"]["committer"] == "Mia Maker <mia@example.org>"
    pointer = xb_proc("recall", "-", input="部署前要检查数据库迁移回滚吗").json["results"]
    assert [(r["kind"], r["layer"]) for r in pointer] == [("skill", "team:eng")]
    level0 = check("skill-recall-output", xb("skill", "recall", "deploy database").json)
    assert [(r["slug"], r["layer"]) for r in level0["results"]] == [("deploy-check", "team:eng")]
    draft = xb("skill", "recall", "rotate database credentials release").json["results"]
    assert "draft-runbook" not in [r["slug"] for r in draft]
    level1 = xb("skill", "recall", "--slug", "deploy-check")
    assert level1.code == 0 and level1.json["layer"] == "team:eng"
    level2 = xb(
        "skill", "recall", "--slug", "deploy-check", "--revision", "1", "--resource", "SKILL.md"
    )
    assert level2.code == 0 and level2.json["layer"] == "team:eng"
    assert xb("skill", "recall", "--slug", "draft-runbook").code == 3


def test_the_prompt_hook_reads_the_team_layer_even_offline(
    xb: Run, team: Path, store_dir: Path, tmp_path: Path
) -> None:
    assert xb("init").code == 0
    team.rename(tmp_path / "gone.git")  # offline: the layer answers from its last pull
    payload = {
        "hook_event_name": "UserPromptSubmit",
        "prompt": "build tips: make -j2 on the CI box?",
        "session_id": "s-1",
        "cwd": str(tmp_path),
    }
    proc = subprocess.run(
        [sys.executable, "-m", "xbrain", "hook", "claude-code"],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env={**os.environ, "XBRAIN_STORE": str(store_dir)},
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    context = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "make -j2" in context or "-j" in context


def test_without_a_team_every_read_is_unchanged(xb_proc: Run, xb: Run, tmp_path: Path) -> None:
    personal(xb, tmp_path)
    found = xb_proc("search", "dialog").json["results"]
    assert found and all("layer" not in r for r in found)
    assert all("layer" not in r for r in xb_proc("list").json["results"])
    recalled = xb_proc("recall", "-", input="a personal dialog note about keyboard focus")
    assert all("layer" not in r for r in recalled.json["results"])


def test_a_team_result_the_merge_left_out_is_not_counted_as_shown(
    xb_proc: Run, xb: Run, team: Path
) -> None:
    """The team layer's recall marks what it returns as shown this session; what the
    merge with the personal answer then cut (here: --top-k 1, the personal memory
    first) must surface later in the session, not be skipped as "shown"."""
    assert xb("entry", "import", str(EXAMPLES / "memex")).code == 0  # the same entries
    own = [
        {
            "kind": "memory",
            "name": "ci-speed",
            "description": "CI build tips: use make -j2",
            "queries": ["build tips make -j2 on the CI box"],
            "body": "Mine: ccache.",
        }
    ]
    assert xb("entry", "put", "-", input=json.dumps(own)).code == 0
    assert xb("entry", "delete", MEMORY).code == 0  # the team's copy is the only one now
    session = json.dumps({"prompt": "build tips: make -j2 on the CI box?", "session_id": "cut"})
    first = xb_proc("recall", "-", "--top-k", "1", input=session).json
    assert [r["layer"] for r in first["results"] if r["kind"] == "memory"] == ["personal"]
    assert {"id": MEMORY, "reason": "over budget"} in first["skipped"]
    again = json.dumps({"prompt": "project notes build tips", "session_id": "cut"})
    later = xb_proc("recall", "-", input=again).json
    assert [r["layer"] for r in later["results"] if r["id"] == MEMORY] == ["team:eng"]
