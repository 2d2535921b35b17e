"""`xbrain mcp`, driven through the official MCP SDK's own client over stdio."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the MCP tests need the mcp extra (pip install 'xbrain[mcp]')")

import anyio
import filelock
from jsonschema import Draft202012Validator
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError

from tests.conftest import EXAMPLES, Result, head, make, sample, snapshot_files
from xbrain.mcp_server import Tools
from xbrain.schemas import inline_schema, schema_errors

Run = Callable[..., Result]
ID = "resource_e6030e7a46ceae274d1f608ea3873d83ecbb532113359bbcce333adfce358a56"
TOOLS = {
    "search",
    "get",
    "put",
    "delete",
    "status",
    "list",
    "log",
    "diff",
    "restore",
    "recall_skill",
    "save_skill",
    "recall",
    "propose_entry",
}


@asynccontextmanager
async def connect(store: Path | None, *extra: str, mode: str = "auto") -> AsyncIterator[Client]:
    """A client session with ``python -m xbrain mcp`` as a child process."""
    args = ["-m", "xbrain", "mcp", *extra]
    if store is not None:
        args += ["--store", str(store)]
    params = StdioServerParameters(command=sys.executable, args=args, env=dict(os.environ))
    async with Client(params, mode=mode, read_timeout_seconds=60) as client:
        yield client


def session(store: Path | None, body: Callable[[Client], Awaitable[None]], *extra: str) -> None:
    async def run() -> None:
        async with connect(store, *extra) as client:
            await body(client)

    anyio.run(run)


def structured(result: Any) -> Any:
    assert not result.is_error, result.content
    assert json.loads(result.content[0].text) == result.structured_content
    return result.structured_content


def error_text(result: Any) -> str:
    assert result.is_error and result.structured_content is None
    (content,) = result.content
    text: str = content.text
    return text


def cli_error(xb: Run, *args: str, input: Any = None) -> str:
    result = xb(*args, input=input)
    assert result.code != 0 and result.stdout == ""
    return result.stderr.strip()


def without_meta(schema: Any) -> Any:
    """A schema without its files' ``$schema``, ``$id`` and ``title`` (at any level)."""
    if isinstance(schema, list):
        return [without_meta(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: without_meta(v) for k, v in schema.items() if k not in ("$schema", "$id", "title")}
    if isinstance(schema.get("properties"), dict):  # field names: a field may be "title"
        out["properties"] = {k: without_meta(v) for k, v in schema["properties"].items()}
    return out


def test_tools_are_listed_with_schemas_from_schema_dir_and_hints(store_dir: Path) -> None:
    listed: dict[str, Any] = {}
    sizes: list[int] = []

    async def body(client: Client) -> None:
        assert client.server_info is not None and client.server_info.name == "xbrain"
        assert "citation.url" in (client.instructions or "")
        answer = await client.list_tools()
        sizes.append(len(answer.model_dump_json(by_alias=True, exclude_none=True)))
        for tool in answer.tools:
            listed[tool.name] = tool

    session(store_dir, body)
    assert set(listed) == TOOLS  # and in particular no sync, push or remote tool
    stems = {
        name: f"mcp-{name}-input"
        for name in ("search", "put", "status", "list", "log", "diff", "restore")
    }
    stems.update(recall_skill="mcp-recall-skill-input", save_skill="mcp-save-skill-input")
    stems.update(recall="mcp-recall-input", propose_entry="mcp-propose-entry-input")
    outputs = {name: f"{name}-output" for name in TOOLS}
    outputs.update(
        recall_skill="mcp-recall-skill-output", save_skill="skill-save-output", get="mcp-get-output"
    )
    outputs.update(propose_entry="entry-put-output")
    hints = {  # read-only, destructive, idempotent
        "search": (True, False, True),
        "get": (True, False, True),
        "status": (True, False, True),
        "put": (False, False, True),
        "delete": (False, True, True),
        "list": (True, False, True),
        "log": (True, False, True),
        "diff": (True, False, True),
        "restore": (False, False, False),  # issue 12, item 7
        "recall_skill": (True, False, True),
        "save_skill": (False, False, True),
        "recall": (True, False, False),
        "propose_entry": (False, False, True),
    }
    # tools/list was 54.6 KB (38 KB of output schemas): most of a small model's context
    assert sizes[0] <= 20_000, sizes
    for name, tool in listed.items():
        assert tool.input_schema == without_meta(inline_schema(stems.get(name, "mcp-id-input")))
        full = inline_schema(outputs[name])
        # the output's top level as the file has it; below it only types
        for key in ("required", "additionalProperties", "oneOf", "anyOf"):
            assert (key in tool.output_schema) == (key in full), (name, key)
        assert set(tool.output_schema.get("properties", {})) == set(full.get("properties", {}))
        for field in tool.output_schema.get("properties", {}).values():
            assert "properties" not in field and "oneOf" not in field, name
        for schema in (tool.input_schema, tool.output_schema):
            assert schema["type"] == "object" and "$ref" not in json.dumps(schema)
            Draft202012Validator.check_schema(schema)
        annotations = tool.annotations
        assert annotations is not None
        assert (
            annotations.read_only_hint,
            annotations.destructive_hint,
            annotations.idempotent_hint,
            annotations.open_world_hint,
        ) == (*hints[name], False)
        assert tool.description and "sync" not in tool.name
    item = listed["put"].input_schema["properties"]["resources"]["items"]
    assert {"title", "purpose", "useWhen", "limitations"} <= set(item["properties"])
    assert "savedReason" in item["required"] and "never invent" in (
        item["properties"]["savedReason"]["description"].lower()
    )


def test_every_tool_end_to_end(xb: Run, xb_proc: Run, store_dir: Path) -> None:
    seen: dict[str, Any] = {}

    async def body(client: Client) -> None:
        seen["empty"] = structured(await client.call_tool("status", {}))
        seen["put"] = structured(
            await client.call_tool("put", {"resources": [sample(), make("other")]})
        )
        seen["again"] = structured(await client.call_tool("put", {"resources": [sample()]}))
        seen["search"] = structured(
            await client.call_tool(
                "search", {"query": "React dialog focus", "limit": 2, "full": True}
            )
        )
        seen["brief"] = structured(
            await client.call_tool("search", {"query": "React dialog focus", "limit": 2})
        )
        seen["get"] = structured(await client.call_tool("get", {"id": ID}))
        seen["status"] = structured(await client.call_tool("status", {}))
        seen["delete"] = structured(await client.call_tool("delete", {"id": ID}))
        seen["gone"] = error_text(await client.call_tool("get", {"id": ID}))
        seen["after"] = structured(await client.call_tool("search", {"query": "React dialog"}))

    session(store_dir, body, "--agent", "mcp-test", "--writes-in-force")
    for name, schema in [
        ("empty", "status-output"),
        ("put", "put-output"),
        ("search", "search-output"),
        ("get", "mcp-get-output"),
        ("delete", "delete-output"),
    ]:
        assert schema_errors(schema, seen[name]) == []
    assert seen["empty"]["resources"] == 0
    assert (seen["put"]["added"], seen["put"]["total"]) == (2, 2)
    assert seen["again"]["unchanged"] == 1 and seen["again"]["commit"] is None
    (hit,) = [r for r in seen["search"]["results"] if r["citation"]["id"] == ID]
    assert hit["citation"]["url"] == sample()["source"]["url"]
    assert seen["get"] == hit["resource"]
    # by default (issue 12, item 6) a result is brief: no text, a short snippet instead
    (short,) = [r for r in seen["brief"]["results"] if r["citation"]["id"] == ID]
    assert "resource" not in short and short["brief"]["title"] == hit["resource"]["title"]
    assert len(short["brief"]["snippet"]) <= 300 and short["score"] == hit["score"]
    assert schema_errors("search-output", seen["brief"]) == []
    assert seen["status"]["resources"] == 2
    assert seen["delete"] == {
        "deleted": True,
        "remoteSync": "pending_explicit_sync",
        "commit": head(store_dir),
    }
    assert seen["gone"] == cli_error(xb, "get", ID)
    assert seen["gone"].startswith("Resource was deleted at") and "xbrain restore" in seen["gone"]
    assert ID not in {r["citation"]["id"] for r in seen["after"]["results"]}
    # the CLI sees exactly what the tools wrote, as commits with the agent named
    status = xb("status").json
    assert (status["resources"], status["tombstones"]) == (1, 1)
    log = xb("log").json["commits"]
    assert [e["command"] for e in log[:2]] == ["delete", "put"]
    assert {e["agent"] for e in log[:2]} == {"mcp-test"}
    assert xb_proc("doctor").code == 0
    for path in [store_dir, *store_dir.rglob("*")]:  # the server's writes are private too
        assert stat.S_IMODE(path.lstat().st_mode) & 0o077 == 0, path


def test_errors_are_tool_errors_with_the_cli_messages(
    xb: Run, json_file: Callable[[Any], str], store_dir: Path
) -> None:
    assert xb("put", json_file(sample())).code == 0
    before = snapshot_files(store_dir)
    invalid = sample(title=7)
    stale = sample(updatedAt="2020-01-01T00:00:00.000Z", title="older")
    cases: list[tuple[str, dict[str, Any], str]] = [
        ("put", {"resources": [invalid]}, cli_error(xb, "put", json_file(invalid))),
        ("put", {"resources": [stale]}, cli_error(xb, "put", json_file(stale))),
        ("put", {"resources": []}, cli_error(xb, "put", json_file([]))),
        (
            "put",
            {"resources": [sample(), sample()]},
            cli_error(xb, "put", json_file([sample(), sample()])),
        ),
        ("search", {"query": "x", "limit": 21}, cli_error(xb, "search", "x", "--limit", "21")),
        ("search", {"query": "   "}, cli_error(xb, "search", "   ")),
        (
            "search",
            {"query": "x", "domain": "moon"},
            cli_error(xb, "search", "x", "--domain", "moon"),
        ),
        ("get", {"id": "resource_nope"}, cli_error(xb, "get", "resource_nope")),
        ("delete", {"id": "nope"}, cli_error(xb, "delete", "nope")),
        # argument shapes the CLI cannot express get messages of the same kind
        ("search", {"query": 5}, cli_error(xb, "search", "   ")),
        ("search", {"query": "x", "limit": "3"}, cli_error(xb, "search", "x", "--limit", "0")),
        ("status", {"store": "/elsewhere"}, "Unknown argument for status: store."),
        ("get", {}, "Missing argument for get: id."),
        ("put", {"resource": sample()}, "Unknown argument for put: resource."),
    ]
    got: list[str] = []

    async def body(client: Client) -> None:
        for name, arguments, _ in cases:
            got.append(error_text(await client.call_tool(name, arguments)))
        with pytest.raises(MCPError, match="Unknown tool: sync"):
            await client.call_tool("sync", {"all": True})

    session(store_dir, body)
    assert got == [expected for _, _, expected in cases]
    assert "Request failed." not in got and all("\n" not in line for line in got)
    assert snapshot_files(store_dir) == before  # nothing written by any failure


def test_store_is_fixed_at_start_up(xb: Run, tmp_path: Path, store_dir: Path) -> None:
    other = tmp_path / "other"
    xb("put", str(EXAMPLES / "synthetic-resource.json"), store=other)
    counts: list[int] = []

    async def body(client: Client) -> None:
        counts.append(structured(await client.call_tool("status", {}))["resources"])
        structured(await client.call_tool("put", {"resources": [make("x"), make("y")]}))
        counts.append(structured(await client.call_tool("status", {}))["resources"])

    os.environ["XBRAIN_STORE"] = str(other)  # --store wins over the environment
    try:
        session(store_dir, body)
    finally:
        del os.environ["XBRAIN_STORE"]
    assert counts == [0, 2]
    assert xb("status", store=other).json["resources"] == 1
    assert xb("status").json["resources"] == 2


def test_busy_store_is_a_tool_error_and_writes_nothing(xb: Run, store_dir: Path) -> None:
    xb("put", str(EXAMPLES / "synthetic-resource.json"))
    before = snapshot_files(store_dir)
    messages: list[str] = []
    lock = filelock.FileLock(str(store_dir / ".git" / "xbrain.lock"))

    async def body(client: Client) -> None:
        with lock:
            result = await client.call_tool("put", {"resources": [make("z")]})
            messages.append(error_text(result))
            assert snapshot_files(store_dir) == before
        messages.append(str(structured(await client.call_tool("put", {"resources": [make("z")]}))))

    with lock:
        busy_cli = xb("put", str(EXAMPLES / "batch.json"), "--wait", "0")
    session(store_dir, body, "--wait", "0.2")
    assert messages[0] == busy_cli.stderr.strip()
    assert busy_cli.code == 6 and "busy" in messages[0]
    assert "'added': 1" in messages[1]


def test_legacy_handshake_clients_work_too(xb: Run, store_dir: Path) -> None:
    xb("put", str(EXAMPLES / "synthetic-resource.json"))
    found: list[Any] = []

    async def run() -> None:
        async with connect(store_dir, mode="legacy") as client:
            assert client.protocol_version < "2026"
            found.append(structured(await client.call_tool("search", {"query": "dialog focus"})))

    anyio.run(run)
    assert [r["citation"]["id"] for r in found[0]["results"]] == [ID]


def test_put_over_ten_mib_is_refused_before_the_store(tmp_path: Path, store_dir: Path) -> None:
    tools = Tools(store_dir, tmp_path / "cache", wait=0, agent=None)
    big = sample(text="x" * (10 * 1024 * 1024))
    with pytest.raises(Exception, match=r"^Input exceeds 10 MiB\.$"):
        tools.call("put", {"resources": [big]})
    assert not store_dir.exists()


def test_without_the_extra_the_command_says_how_to_install_it(store_dir: Path) -> None:
    code = "import sys; sys.modules['mcp'] = None; from xbrain.cli import main; main()"
    result = subprocess.run(
        [sys.executable, "-c", code, "mcp", "--store", str(store_dir)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr == (
        "The MCP server needs the optional mcp package: pip install 'xbrain[mcp]'.\n"
    )


def test_help_explains_the_server(xb: Run) -> None:
    text = xb("mcp", "--help", store=None).stdout
    for phrase in ("stdio", "xbrain[mcp]", "--store", "no sync or push"):
        assert phrase in " ".join(text.split())


TRANSCRIPT = EXAMPLES / "agent-session.md"
STEP = re.compile(
    r"\*\*Agent calls `(\w+)`:\*\*\s*```json\n(.*?)```\s*\*\*xbrain returns:\*\*\s*```json\n(.*?)```",
    re.S,
)


def masked(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: "<commit>" if k == "commit" and v else masked(v) for k, v in value.items()}
    if isinstance(value, list):
        return [masked(v) for v in value]
    return value


def test_example_transcript_replays_exactly(store_dir: Path) -> None:
    steps = STEP.findall(TRANSCRIPT.read_text())
    assert [name for name, _, _ in steps] == ["put", "search", "search", "delete"]
    replies: list[Any] = []

    async def body(client: Client) -> None:
        for name, arguments, _ in steps:
            replies.append(structured(await client.call_tool(name, json.loads(arguments))))

    session(store_dir, body, "--writes-in-force")  # as the example's server is started
    for (_, _, recorded), reply in zip(steps, replies, strict=True):
        assert masked(reply) == masked(json.loads(recorded))
    cited = replies[1]["results"][0]["citation"]["url"]
    assert cited in TRANSCRIPT.read_text().split("**Agent:**")[2]  # the answer cites the URL


def test_started_by_hand_it_says_so_and_ctrl_c_stops_it(store_dir: Path) -> None:
    import pty
    import select
    import signal
    import time

    pid, fd = pty.fork()
    if pid == 0:  # the child: the server on a terminal, as a user would start it
        # where Ctrl-C is delivered (a shell's background job ignores SIGINT, and an
        # ignored SIGINT is inherited across exec: the server could never be stopped)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.execv(sys.executable, [sys.executable, "-m", "xbrain", "mcp", "--store", str(store_dir)])
    out = b""
    deadline = time.monotonic() + 30
    while b"Ctrl-C" not in out and time.monotonic() < deadline:
        if select.select([fd], [], [], 0.5)[0]:
            out += os.read(fd, 1024)
    os.kill(pid, signal.SIGINT)
    while True:
        try:
            ready = select.select([fd], [], [], 10)[0]
            chunk = os.read(fd, 1024) if ready else b""
        except OSError:  # the terminal closed with the child
            break
        if not chunk:
            break
        out += chunk
    for _ in range(100):  # never hang the suite: 10 s, then the child is killed
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        time.sleep(0.1)
    else:
        os.kill(pid, signal.SIGKILL)
        status = os.waitpid(pid, 0)[1]
    os.close(fd)
    text = out.decode().replace("\r\n", "\n")
    assert text == f"xbrain mcp: serving {store_dir} over stdio; Ctrl-C to stop.\nInterrupted.\n"
    assert os.waitstatus_to_exitcode(status) == 130
    assert not store_dir.exists()  # starting and stopping writes nothing


def test_a_cancelled_put_commits_all_or_nothing_and_the_server_goes_on(store_dir: Path) -> None:
    batch = [make(f"c{i}", text="cancel " * 200) for i in range(1000)]
    counts: list[int] = []

    async def body(client: Client) -> None:
        with anyio.move_on_after(0.05):  # the client gives up while the put is running
            await client.call_tool("put", {"resources": batch})
        counts.append(structured(await client.call_tool("status", {}))["resources"])
        structured(await client.call_tool("put", {"resources": [sample()]}))
        counts.append(structured(await client.call_tool("status", {}))["resources"])

    session(store_dir, body)
    assert counts[0] in (0, 1000)  # never a part of the batch
    assert counts[1] == counts[0] + 1


def test_browse_and_undo_tools(xb: Run, store_dir: Path) -> None:
    """Issue 12, item 7: list, log, diff and restore as MCP tools, same answers as the CLI."""
    assert xb("put", "-", input=[sample(), make("other")]).code == 0
    edited = sample(title="Edited title", updatedAt="2026-10-09T00:00:00Z")
    assert xb("put", "-", input=edited).code == 0
    seen: dict[str, Any] = {}

    async def body(client: Client) -> None:
        seen["list"] = structured(await client.call_tool("list", {"limit": 1}))
        seen["log"] = structured(await client.call_tool("log", {"id": ID}))
        seen["diff"] = structured(await client.call_tool("diff", {"id": ID}))
        first = seen["log"]["commits"][-1]["commit"]
        seen["restore"] = structured(await client.call_tool("restore", {"id": ID, "at": first}))
        seen["bad"] = error_text(await client.call_tool("restore", {"id": ID, "at": "nope"}))

    session(store_dir, body)
    for name in ("list", "log", "diff", "restore"):
        assert schema_errors(f"{name}-output", seen[name]) == [], name
    now = xb("list", "--limit", "1").json  # after the restore: the same id, restored title
    assert now["total"] == seen["list"]["total"] and now["results"][0]["id"] == ID
    assert seen["list"]["total"] == 2 and seen["list"]["results"][0]["title"] == "Edited title"
    assert [c["command"] for c in seen["log"]["commits"]] == ["put", "put"]
    assert {"field": "title", "before": sample()["title"], "after": "Edited title"} in seen["diff"][
        "changes"
    ]
    assert seen["restore"]["restored"] is True
    assert xb("get", ID).json["title"] == sample()["title"]
    assert seen["bad"] == cli_error(xb, "restore", ID, "--at", "nope")


def test_list_filters_and_orders(xb: Run, tmp_path: Path) -> None:
    items = [make(f"l{i}", updatedAt=f"2026-10-0{i}T00:00:00Z") for i in range(1, 6)]
    items.append(
        {
            **make("tw"),
            "source": {
                "provider": "x",
                "id": "123456789",
                "url": "https://x.com/i/web/status/123456789",
            },
        }
    )
    assert xb("put", "-", input=items).code == 0
    listed = xb("list", "--limit", "3").json
    assert listed["total"] == 6 and len(listed["results"]) == 3
    times = [r["updatedAt"] for r in xb("list").json["results"]]
    assert times == sorted(times, reverse=True)
    assert xb("list", "--since", "2026-10-04").json["total"] == 2 + (
        items[-1]["updatedAt"] >= "2026-10-04"
    )
    assert [r["source"]["provider"] for r in xb("list", "--provider", "x").json["results"]] == ["x"]
    assert xb("list", "--since", "soon").code == 4
    assert xb("list", "--limit", "0").code == 4
    empty = xb("list", "--store", str(tmp_path / "nothing-here"), store=None)
    assert empty.code == 0 and empty.json == {"total": 0, "results": []}


def test_list_pages_with_offset(xb: Run, store_dir: Path) -> None:
    """--offset pages through every match once, in the listing's order, in CLI and MCP."""
    items = [make(f"p{i}", updatedAt=f"2026-10-{1 + i % 4:02d}T00:00:00Z") for i in range(11)]
    assert xb("put", "-", input=items).code == 0
    whole = [r["id"] for r in xb("list", "--limit", "100").json["results"]]
    pages = [xb("list", "--limit", "4", "--offset", str(start)).json for start in (0, 4, 8)]
    assert [p["total"] for p in pages] == [11, 11, 11]
    assert [r["id"] for p in pages for r in p["results"]] == whole and len(whole) == 11
    past = xb("list", "--offset", "11").json
    assert past == {"total": 11, "results": []}
    bad = xb("list", "--offset", "-1")
    assert bad.code == 4 and bad.stderr == "offset must be 0–10,000,000.\n" and not bad.stdout
    assert xb("list", "--offset", "many").code == 2
    seen: dict[str, Any] = {}

    async def body(client: Client) -> None:
        seen["page"] = structured(await client.call_tool("list", {"limit": 4, "offset": 4}))
        seen["bad"] = error_text(await client.call_tool("list", {"offset": -1}))

    session(store_dir, body)
    assert [r["id"] for r in seen["page"]["results"]] == whole[4:8]
    assert "offset" in seen["bad"]


def test_put_with_a_bare_resource_says_to_wrap_it(store_dir: Path) -> None:
    seen: dict[str, Any] = {}

    async def body(client: Client) -> None:
        seen["bare"] = error_text(await client.call_tool("put", sample()))

    session(store_dir, body)
    assert '"resources"' in seen["bare"] and "wrap" in seen["bare"]


SKILL_MD = "---\nname: triage\ndescription: 线上故障分级与升级流程 (incident triage)\n---\nPage the on-call.\n"


@pytest.mark.parametrize("allow", [False, True])
def test_skill_tools_save_and_recall_progressively(xb: Run, store_dir: Path, allow: bool) -> None:
    seen: dict[str, Any] = {}

    async def body(client: Client) -> None:
        files = {"SKILL.md": SKILL_MD, "references/levels.md": "P1: down\n"}
        seen["save"] = structured(
            await client.call_tool("save_skill", {"files": files, "publish": True})
        )
        seen["level0"] = structured(await client.call_tool("recall_skill", {"query": "故障 升级"}))
        rev = seen["save"]["revision_id"]
        if not allow:  # a proposed skill is not offered before review, only read by revision
            seen["unreviewed"] = error_text(
                await client.call_tool("recall_skill", {"slug": "triage"})
            )
        seen["level1"] = structured(
            await client.call_tool("recall_skill", {"slug": "triage", "revision": rev})
        )
        if allow:
            seen["served"] = structured(await client.call_tool("recall_skill", {"slug": "triage"}))
        seen["level2"] = structured(
            await client.call_tool(
                "recall_skill",
                {"slug": "triage", "revision": rev, "resource": "references/levels.md"},
            )
        )
        seen["torn"] = error_text(
            await client.call_tool(
                "recall_skill", {"slug": "triage", "resource": "references/levels.md"}
            )
        )
        seen["bad"] = error_text(
            await client.call_tool("save_skill", {"files": {"SKILL.md": "no frontmatter"}})
        )
        seen["stale"] = error_text(
            await client.call_tool(
                "save_skill",
                {"files": {"SKILL.md": SKILL_MD + "v2\n"}, "expect_revision": "rev_" + "0" * 32},
            )
        )

    session(store_dir, body, "--agent", "mcp-test", *(["--allow-publish"] if allow else []))
    assert seen["save"]["state"] == ("published" if allow else "proposed")
    assert ("warnings" in seen["save"]) is not allow
    if allow:
        assert seen["level0"]["results"][0]["slug"] == "triage"
        assert seen["served"] == seen["level1"]
    else:
        assert seen["level0"]["results"] == []
        assert "only proposed revisions" in seen["unreviewed"]
    assert seen["level1"]["instructions"] == "Page the on-call.\n"
    assert seen["level1"].get("fallback") is None
    assert seen["level2"]["content"] == "P1: down\n"
    for name, schema in (
        ("level0", "skill-recall-output"),
        ("level1", "skill-show-output"),
        ("level2", "skill-component-output"),
        ("save", "skill-save-output"),
    ):
        assert schema_errors(schema, seen[name]) == []
        assert schema_errors("mcp-recall-skill-output", seen[name]) == [] or name == "save"
    # the message names the tool's argument, not the CLI's flag
    assert "the argument revision" in seen["torn"] and "--revision" not in seen["torn"]
    assert "frontmatter" in seen["bad"]
    assert "not rev_" in seen["stale"]
    log = xb("skill", "log", "triage").json
    assert len(log["revisions"]) == 1 and log["commits"][0]["agent"] == "mcp-test"


def test_the_recall_tool_discloses_per_session(xb: Run, store_dir: Path) -> None:
    assert xb("entry", "import", str(EXAMPLES / "memex")).code == 0
    seen: list[Any] = []

    async def body(client: Client) -> None:
        # any non-empty id, as the CLI's --session (a dotted one was refused)
        for sid in ("m-1", "m-1", "claude.session/42", "claude.session/42"):
            seen.append(
                structured(
                    await client.call_tool(
                        "recall", {"prompt": "can I git push --force?", "session": sid}
                    )
                )
            )
        seen.append(error_text(await client.call_tool("recall", {"prompt": 5})))
        for _ in range(2):  # an empty id is no session, as on the command line
            empty = {"prompt": "can I git push --force?", "session": ""}
            seen.append(structured(await client.call_tool("recall", empty)))

    session(store_dir, body)
    assert [r["disclosure"] for r in seen[0]["results"]] == ["full"]
    assert [r["disclosure"] for r in seen[1]["results"]] == ["one-liner"]
    assert [r["disclosure"] for r in seen[2]["results"]] == ["full"]
    assert [r["disclosure"] for r in seen[3]["results"]] == ["one-liner"]
    assert [r["disclosure"] for r in seen[5]["results"]] == ["full"]
    assert [r["disclosure"] for r in seen[6]["results"]] == ["full"]
    assert schema_errors("recall-output", seen[0]) == []
    assert "prompt" in seen[4]


def test_search_and_recall_take_a_mode(xb: Run, store_dir: Path) -> None:
    """Issue 17: the MCP tools choose the retrieval like the CLI's --mode."""
    assert xb("put", str(EXAMPLES / "synthetic-resource.json")).code == 0
    assert xb("entry", "import", str(EXAMPLES / "memex")).code == 0
    seen: list[Any] = []

    async def body(client: Client) -> None:
        seen.append(
            structured(await client.call_tool("search", {"query": "dialog", "mode": "lexical"}))
        )
        recall = {"prompt": "can I git push --force?", "mode": "lexical"}
        seen.append(structured(await client.call_tool("recall", recall)))
        seen.append(error_text(await client.call_tool("search", {"query": "x", "mode": "hybrid"})))
        seen.append(error_text(await client.call_tool("recall", {"prompt": "x", "mode": "fuzzy"})))

    session(store_dir, body)
    assert seen[0]["retrieval"] == "lexical" and seen[0]["results"]
    assert [r["name"] for r in seen[1]["results"]] == ["no-force-push"]
    assert "reindex --semantic" in seen[2]  # semantic recall is off in this store
    assert "mode" in seen[3]


def test_a_tool_profile_serves_only_its_tools(xb_proc: Run, store_dir: Path) -> None:
    """``--tools`` (issue 44 item 12): a client sees and calls only the tools named, by
    name or profile; an unknown name is a usage error before anything starts."""
    xb_proc("put", str(EXAMPLES / "synthetic-resource.json"))
    seen: dict[str, Any] = {}

    async def body(client: Client) -> None:
        seen["names"] = {tool.name for tool in (await client.list_tools()).tools}
        seen["status"] = structured(await client.call_tool("status", {}))["resources"]
        with pytest.raises(MCPError, match="Unknown tool: put"):
            await client.call_tool("put", {"resources": [make("x")]})

    session(store_dir, body, "--tools", "recall, search,status")
    assert seen == {"names": {"recall", "search", "status"}, "status": 1}
    assert xb_proc("status").json["resources"] == 1  # the hidden put wrote nothing

    async def read_only(client: Client) -> None:
        seen["read-only"] = {tool.name for tool in (await client.list_tools()).tools}

    session(store_dir, read_only, "--tools", "read-only")
    assert seen["read-only"] == TOOLS - {"put", "delete", "restore", "save_skill", "propose_entry"}
    for bad in ("recall,nope", "", "read-only,Put"):
        refused = xb_proc("mcp", "--tools", bad)
        assert refused.code == 2 and refused.stdout == "", (bad, refused.stderr)
        assert "--tools" in refused.stderr and len(refused.stderr.strip().splitlines()) == 1
