"""``xbrain mcp``: the store as typed MCP tools over stdio (the optional ``mcp`` extra).

The store is fixed when the server starts; a client chooses only tool arguments. The
tools call the same library functions as the CLI and fail with the same messages, as
MCP tool errors (``isError``) rather than protocol errors, so an agent can read and
act on them. There is deliberately no tool that syncs to a provider or pushes to a
remote: data leaves the machine only by an explicit CLI command of the user.

``Tools`` is plain synchronous code (testable without MCP); ``serve`` is the only part
that imports the SDK. Calls run one at a time in a worker thread, so the event loop
keeps answering pings and a cancelled call still finishes its commit or none.
"""

from __future__ import annotations

import sys
import traceback
from typing import Any

from .. import __version__
from ..errors import XbrainError, describe
from .tools import INSTRUCTIONS, TOOLS, Tool, Tools
from .wire import Wire

__all__ = ["INSTRUCTIONS", "TOOLS", "Tool", "Tools", "Wire", "serve"]


def serve(tools: Tools, *, show_tracebacks: bool = False) -> None:
    """Serve ``tools`` over stdin/stdout until the client closes the connection."""
    try:
        import anyio
        import mcp.types as types
        from mcp.server.lowlevel import Server
        from mcp.server.stdio import stdio_server
        from mcp.shared.exceptions import MCPError
    except ImportError:
        raise XbrainError(
            "The MCP server needs the optional mcp package: pip install 'xbrain[mcp]'."
        ) from None
    from ..codec import json_document

    listing = types.ListToolsResult(
        tools=[
            types.Tool(
                name=tool.name,
                title=tool.title,
                description=tool.description,
                input_schema=tools.inputs[tool.name],
                output_schema=tool.output_schema(),
                annotations=types.ToolAnnotations(
                    title=tool.title,
                    read_only_hint=tool.read_only,
                    destructive_hint=tool.destructive,
                    idempotent_hint=tool.idempotent,
                    open_world_hint=False,
                ),
            )
            for tool in tools.by_name.values()  # the --tools profile: only these exist
        ]
    )
    one_at_a_time = anyio.Lock()

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return listing

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        if params.name not in tools.by_name:
            raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {params.name}")
        async with one_at_a_time:
            try:
                result = await anyio.to_thread.run_sync(tools.call, params.name, params.arguments)
            except Exception as exc:
                if show_tracebacks:
                    traceback.print_exc(file=sys.stderr)
                message = describe(exc)[0]
                return types.CallToolResult(
                    content=[types.TextContent(type="text", text=message)], is_error=True
                )
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=json_document(result))],
            structured_content=result,
        )

    server: Server[Any] = Server(
        "xbrain",
        version=__version__,
        title="xbrain",
        description="A private, local, git-backed memory of sources for agents.",
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )

    wire = Wire(types.jsonrpc_message_adapter.validate_python)

    async def run() -> None:
        async with stdio_server(wire, wire) as (read_stream, write_stream):  # type: ignore[arg-type]
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(run)
