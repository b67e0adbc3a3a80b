"""The MCP requests the manager sends on a session: tools/list page by page, tools/call,
and the streamable HTTP transport with the settings' headers."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

from ohtui.sdk.mcp.status import ToolInfo
from ohtui.sdk.tool.tool import ToolAnnotations

if TYPE_CHECKING:
    from mcp import ClientSession


@contextlib.asynccontextmanager
async def http_streams(url: str, headers: dict[str, str]) -> Any:
    """Streamable HTTP as (read, write), with the settings' headers on every request."""
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async with (
        create_mcp_http_client(headers=headers or None) as client,
        streamable_http_client(url, http_client=client) as (read, write, _),
    ):
        yield read, write


async def call_tool(session: ClientSession, tool: str, arguments: dict[str, Any]) -> Any:
    """`tools/call`, sent as a plain request: `ClientSession.call_tool` also checks the
    structured result against the output schema by recompiling the schema on every call
    (~9 ms a call here); `_call` checks it with a cached validator instead."""
    from mcp import types

    params = types.CallToolRequestParams(name=tool, arguments=arguments)
    request = types.ClientRequest(types.CallToolRequest(params=params))
    return await session.send_request(request, types.CallToolResult)


async def list_tools(session: ClientSession) -> tuple[ToolInfo, ...]:
    """Every tool of the server, page by page."""
    from mcp import types

    tools: list[ToolInfo] = []
    cursor: str | None = None
    while True:
        params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await session.list_tools(params=params)
        for tool in page.tools:
            annotations = (
                ToolAnnotations.model_validate(tool.annotations.model_dump(exclude_none=True))
                if tool.annotations is not None
                else None
            )
            tools.append(
                ToolInfo(
                    name=tool.name,
                    description=tool.description or "",
                    input_schema=dict(tool.inputSchema),
                    output_schema=dict(tool.outputSchema) if tool.outputSchema else None,
                    annotations=annotations,
                )
            )
        cursor = page.nextCursor
        if not cursor:
            return tuple(tools)
