"""Every xbrain command shown in the README runs as written; so does examples/demo.sh."""

from __future__ import annotations

import json
import os
import re
import shlex
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

BLOCK = re.compile(r"```sh\n(.*?)```", re.DOTALL)


def readme_blocks(name: str = "README.md") -> list[list[str]]:
    blocks = []
    for body in BLOCK.findall((ROOT / name).read_text()):
        lines = [line.split("  #")[0].strip() for line in body.splitlines()]
        commands = [
            line
            for line in lines
            if line.startswith("xbrain ") or (line.startswith("echo ") and "| xbrain " in line)
        ]
        if commands:
            blocks.append(commands)
    return blocks


def test_readme_runs_in_order_on_one_store(tmp_path: Path) -> None:
    """Every command the README shows, block after block, on one throwaway store."""
    env = {**os.environ, "XBRAIN_STORE": str(tmp_path / "store")}
    for name in ("provider-command.json", "provider-file.json"):  # keep their files in tmp
        text = (ROOT / "examples" / name).read_text().replace("/tmp/", f"{tmp_path}/")
        text = text.replace('"examples/', f'"{ROOT}/examples/')
        (tmp_path / name).write_text(text)
    commands = [command for block in readme_blocks() for command in block]
    assert len(commands) >= 25
    for command in commands:
        command = command.replace("/tmp/", f"{tmp_path}/")
        for name in ("provider-command.json", "provider-file.json"):
            command = command.replace(f"examples/{name}", str(tmp_path / name))
        python = shlex.quote(sys.executable) + " -m xbrain"
        asked = command
        if command.startswith("xbrain "):
            command = python + command.removeprefix("xbrain")
        else:
            command = command.replace("| xbrain ", f"| {python} ")
        proc = subprocess.run(
            command, shell=True, cwd=ROOT, env=env, capture_output=True, text=True
        )
        assert proc.returncode == 0, f"{command}\n{proc.stderr}"
        assert proc.stdout.strip().startswith("{"), command
        if asked.endswith("| xbrain recall -"):  # they recall what the text says they do
            results = json.loads(proc.stdout)["results"]
            assert bool(results) is ("ok thanks" not in command), (command, results)


def test_skill_commands_run_in_order(tmp_path: Path) -> None:
    """Every command SKILL.md shows runs, in order, on one store, with only the files it
    tells the agent to write (an installed skill has no examples/ folder)."""
    env = {**os.environ, "XBRAIN_STORE": str(tmp_path / "store")}
    text = (ROOT / "SKILL.md").read_text()
    assert "examples/" not in text
    (resource,) = re.findall(r"```json\n(.*?)```", text, re.DOTALL)
    (tmp_path / "resource.json").write_text(resource)
    commands = [c for block in readme_blocks("SKILL.md") for c in block]
    assert len(commands) >= 5
    for command in commands:
        command = command.replace("/tmp/", f"{tmp_path}/")
        command = shlex.quote(sys.executable) + " -m xbrain" + command.removeprefix("xbrain")
        proc = subprocess.run(
            command, shell=True, cwd=tmp_path, env=env, capture_output=True, text=True
        )
        assert proc.returncode == 0, f"{command}\n{proc.stderr}"
        assert proc.stdout.strip().startswith("{"), command


def test_skill_front_matter() -> None:
    text = (ROOT / "SKILL.md").read_text()
    head = text.split("---")[1]
    assert "\nname: xbrain\n" in head and "\ndescription: " in head
    assert len(text.splitlines()) < 500
    assert "savedReason" in text and "never" in text.lower()


def test_demo_script(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "xbrain"
    wrapper.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m xbrain "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    proc = subprocess.run(
        ["sh", str(ROOT / "examples" / "demo.sh")], env=env, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    assert '"added": 1' in proc.stdout
    assert "Fictional accessible dialog guide" in proc.stdout


def test_readme_lists_every_command() -> None:
    from xbrain.cli import cli

    readme = (ROOT / "README.md").read_text()
    for name in cli.list_commands(None):  # type: ignore[arg-type]
        assert f"`xbrain {name}" in readme, name


def test_readme_mcp_configuration_starts_a_working_server(tmp_path: Path) -> None:
    """The `mcpServers` snippet is valid JSON whose command serves the five tools."""
    pytest.importorskip("mcp", reason="needs the mcp extra")
    import json

    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    blocks = re.findall(r"```json\n(.*?)```", (ROOT / "README.md").read_text(), re.DOTALL)
    (config,) = [json.loads(b) for b in blocks if '"mcpServers"' in b]
    server = config["mcpServers"]["xbrain"]
    assert server["command"] == "xbrain" and server["args"][:2] == ["mcp", "--store"]
    args = ["-m", "xbrain", *server["args"][:2], str(tmp_path / "store")]
    names: list[str] = []

    async def run() -> None:
        params = StdioServerParameters(command=sys.executable, args=args, env=dict(os.environ))
        async with Client(params) as client:
            names.extend(tool.name for tool in (await client.list_tools()).tools)

    anyio.run(run)
    resources = ["delete", "diff", "get", "list", "log", "put", "restore", "search", "status"]
    assert sorted(names) == sorted(
        [*resources, "recall_skill", "save_skill", "recall", "propose_entry"]
    )
    (hooks,) = [json.loads(b)["hooks"] for b in blocks if '"UserPromptSubmit"' in b]
    assert set(hooks) == {"UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionStart"}
    for event, (entry,) in hooks.items():
        command = entry["hooks"][0]["command"]
        assert command.endswith("/xbrain hook claude-code"), command
        argv = [sys.executable, "-m", "xbrain", *command.split()[1:]]
        answered = subprocess.run(
            argv,
            input=json.dumps({"hook_event_name": event, "prompt": "x", "tool_name": "Bash"}),
            capture_output=True,
            text=True,
            env={**os.environ, "XBRAIN_STORE": str(tmp_path / "store")},
        )
        assert (answered.returncode, answered.stderr) == (0, ""), event
        if event == "SessionStart":
            assert "xbrain search" in answered.stdout
