"""Every MCP request gets a response or a JSON-RPC error (issue 11, item 15).

The SDK (mcp 2.3) dropped, without a word, a line that is not JSON (no -32700), a call
nested 5,000 deep and one whose arguments hold a lone surrogate; the client waited
forever. These tests speak raw JSON-RPC lines to a real ``xbrain mcp`` process.
"""

from __future__ import annotations

import json
import select
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the MCP server is the optional mcp extra")


class Server:
    def __init__(self, store: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "xbrain", "mcp", "--store", str(store)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )

    def send(self, line: bytes | str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode() if isinstance(line, str) else line)
        self.proc.stdin.flush()

    def receive(self, timeout: float = 20) -> dict[str, Any]:
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        assert ready, "no response"
        reply: dict[str, Any] = json.loads(self.proc.stdout.readline())
        return reply


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    srv = Server(tmp_path / "store")
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "wire-test", "version": "1"},
        },
    }
    srv.send(json.dumps(init) + "\n")
    assert srv.receive()["id"] == 0
    srv.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
    yield srv
    srv.proc.kill()
    srv.proc.wait()
    for stream in (srv.proc.stdin, srv.proc.stdout, srv.proc.stderr):
        if stream is not None:
            stream.close()


def call(ident: int, arguments: str) -> str:
    return (
        f'{{"jsonrpc":"2.0","id":{ident},"method":"tools/call",'
        f'"params":{{"name":"search","arguments":{arguments}}}}}\n'
    )


@pytest.mark.parametrize(
    ("line", "ident", "code"),
    [
        ("{not json\n", None, -32700),
        (b"\xff\xfe{}\n", None, -32700),
        (call(5, '{"query":"\\ud800"}'), 5, -32602),
        (call(6, '{"query":' + "[" * 5000 + "]" * 5000 + "}"), 6, -32700),
        (call(7, '{"query":' + "[" * 200 + "]" * 200 + "}"), 7, -32600),
        ('[{"jsonrpc":"2.0","id":8,"method":"ping"}]\n', None, -32600),
        ('{"jsonrpc":"2.0","id":9}\n', 9, -32600),
        # 4 MB of "id" keys, not JSON: finding the id sliced the rest at each (minutes)
        ("{" + '"id":{},' * 500_000 + '"id": 10, "x"\n', 10, -32700),
    ],
)
def test_malformed_requests_get_an_error_and_the_server_goes_on(
    server: Server, line: str | bytes, ident: int | None, code: int
) -> None:
    server.send("\n")  # blank lines are ignored, not answered
    server.send(line)
    reply = server.receive()
    assert reply["id"] == ident and reply["error"]["code"] == code, reply
    server.send(
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 99,
                "method": "tools/call",
                "params": {"name": "status", "arguments": {}},
            }
        )
        + "\n"
    )
    after = server.receive()
    assert after["id"] == 99 and after["result"]["structuredContent"]["resources"] == 0


def test_an_oversized_line_is_refused_and_drained(server: Server) -> None:
    huge = call(10, '{"query":"' + "x" * (13 * 1024 * 1024) + '"}')
    server.send(huge)
    reply = server.receive(60)
    assert reply["id"] is None and reply["error"]["code"] == -32600
    server.send(json.dumps({"jsonrpc": "2.0", "id": 11, "method": "ping"}) + "\n")
    assert server.receive()["id"] == 11


def test_requests_sent_just_before_stdin_closes_are_answered(server: Server) -> None:
    """A client that sends its last requests and closes stdin at once got no answer to
    them (the SDK cancels what is in flight when the input ends: "Connection closed")."""
    for ident in (1, 2, 3):
        server.send(call(ident, '{"query": "kernel"}'))
    server.send("{not json\n")
    assert server.proc.stdin is not None and server.proc.stdout is not None
    server.proc.stdin.close()
    replies = [json.loads(line) for line in server.proc.stdout.read().splitlines()]
    assert server.proc.wait(timeout=60) == 0
    assert sorted(str(reply["id"]) for reply in replies) == ["1", "2", "3", "None"]
    assert all("result" in reply for reply in replies if reply["id"] is not None)
