"""Team layers in the reads that did not have them (issue 47): ``entry get``,
``entry list`` and the MCP read tools (search, get, list, recall, recall_skill). Each
team result says its layer, ``trust: team`` and its provenance; a personal record wins;
what a team has not accepted stays out; with no team the answers are as before."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.cli.test_team_reads import DIALOG, MEMORY, check, personal, team
from tests.conftest import EXAMPLES, Result

Run = Callable[..., Result]
MIA = "Mia Maker <mia@example.org>"
__all__ = ["team"]  # the fixture, used by name


def test_entry_list_and_get_read_every_team_layer(xb: Run, xb_proc: Run, team: Path) -> None:
    mine = [
        {
            "kind": "rule",
            "name": "my-own-rule",
            "description": "A rule of my own",
            "queries": ["my own rule"],
            "body": "Mine.",
            "oneLiner": "Mine.",
        }
    ]
    assert xb("entry", "put", "-", input=json.dumps(mine)).code == 0
    listed = check("entry-list-output", xb_proc("entry", "list").json)
    by_id = {e["id"]: e for e in listed["entries"]}
    assert listed["count"] == len(listed["entries"]) > 2
    assert by_id[MEMORY]["layer"] == "team:eng" and by_id[MEMORY]["trust"] == "team"
    assert by_id[MEMORY]["provenance"]["committer"] == MIA
    own = [e for e in listed["entries"] if e["name"] == "my-own-rule"]
    assert [(e["layer"], e["trust"]) for e in own] == [("personal", "trusted")]
    order = [(e["kind"], e["scope"], e["name"]) for e in listed["entries"]]
    assert order == sorted(order)
    rules = xb_proc("entry", "list", "--kind", "rule").json["entries"]
    assert rules and {e["kind"] for e in rules} == {"rule"}

    got = check("entry-get-output", xb_proc("entry", "get", MEMORY).json)
    assert got["layer"] == "team:eng" and got["trust"] == "team"
    assert got["provenance"]["committer"] == MIA and got["entry"]["id"] == MEMORY
    missing = xb_proc("entry", "get", "entry_" + "0" * 64)
    assert missing.code == 3 and len(missing.stderr.strip().splitlines()) == 1


def test_a_personal_entry_wins_over_the_teams_with_the_same_id(
    xb: Run, xb_proc: Run, team: Path
) -> None:
    assert xb("entry", "import", str(EXAMPLES / "memex")).code == 0
    listed = check("entry-list-output", xb_proc("entry", "list").json)
    assert {e["layer"] for e in listed["entries"]} == {"personal"}
    assert len({e["id"] for e in listed["entries"]}) == listed["count"]
    got = check("entry-get-output", xb_proc("entry", "get", MEMORY).json)
    assert "layer" not in got and got["id"] == MEMORY  # yours, as always


def test_entry_reads_are_unchanged_without_a_team(xb: Run, xb_proc: Run) -> None:
    assert xb("entry", "import", str(EXAMPLES / "memex")).code == 0
    listed = xb_proc("entry", "list").json
    assert all("layer" not in e and "provenance" not in e for e in listed["entries"])
    assert "layer" not in xb_proc("entry", "get", MEMORY).json


def mcp_calls(store: Path, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    """Each call's structured answer (or its error text) from ``xbrain mcp`` over stdio."""
    pytest.importorskip("mcp", reason="the MCP tests need the mcp extra")
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    answers: list[Any] = []
    args = ["-m", "xbrain", "mcp", "--store", str(store)]

    async def run() -> None:
        params = StdioServerParameters(command=sys.executable, args=args, env=dict(os.environ))
        async with Client(params, read_timeout_seconds=60) as client:
            for name, arguments in calls:
                result = await client.call_tool(name, arguments)
                if result.is_error:
                    answers.append(result.content[0].text)
                else:
                    assert json.loads(result.content[0].text) == result.structured_content
                    answers.append(result.structured_content)

    anyio.run(run)
    return answers


def test_the_mcp_read_tools_read_every_team_layer(
    xb: Run, team: Path, tmp_path: Path, store_dir: Path
) -> None:
    personal(xb, tmp_path)
    found, brief, got, listed, recalled, level0, level1, draft = mcp_calls(
        store_dir,
        [
            ("search", {"query": "accessible dialog", "full": True}),
            ("search", {"query": "accessible dialog"}),
            ("get", {"id": DIALOG}),
            ("list", {}),
            ("recall", {"prompt": "build tips: make -j2?"}),
            ("recall_skill", {"query": "deploy check before shipping"}),
            ("recall_skill", {"slug": "deploy-check"}),
            ("recall_skill", {"slug": "draft-runbook"}),
        ],
    )
    hits = {r["citation"]["id"]: r for r in check("search-output", found)["results"]}
    assert hits[DIALOG]["layer"] == "team:eng" and hits[DIALOG]["trust"] == "team"
    assert hits[DIALOG]["provenance"]["committer"] == MIA
    assert {r["layer"] for r in hits.values()} == {"personal", "team:eng"}
    assert {r["layer"] for r in check("search-output", brief)["results"]} == {
        "personal",
        "team:eng",
    }
    check("mcp-get-output", got)
    assert (got["id"], got["layer"], got["trust"]) == (DIALOG, "team:eng", "team")
    assert got["provenance"]["committer"] == MIA
    check("list-output", listed)
    assert listed["total"] == 2
    assert {(r["id"], r["layer"]) for r in listed["results"]} >= {(DIALOG, "team:eng")}
    memory = [r for r in check("recall-output", recalled)["results"] if r["id"] == MEMORY]
    assert memory and (memory[0]["layer"], memory[0]["trust"]) == ("team:eng", "team")
    skills = {r["slug"]: r for r in check("skill-recall-output", level0)["results"]}
    assert skills["deploy-check"]["layer"] == "team:eng"
    assert "draft-runbook" not in skills  # a team's draft is not the team's yet
    check("skill-show-output", level1)
    assert (level1["slug"], level1["layer"], level1["state"]) == (
        "deploy-check",
        "team:eng",
        "published",
    )
    assert isinstance(draft, str) and "draft-runbook" in draft


def test_the_mcp_read_tools_answer_as_before_without_a_team(
    xb: Run, tmp_path: Path, store_dir: Path
) -> None:
    assert xb("put", str(EXAMPLES / "synthetic-resource.json")).code == 0
    found, got, listed = mcp_calls(
        store_dir,
        [("search", {"query": "accessible dialog"}), ("get", {"id": DIALOG}), ("list", {})],
    )
    assert all("layer" not in r for r in found["results"])
    assert "layer" not in got and got["id"] == DIALOG
    assert all("layer" not in r for r in listed["results"])
