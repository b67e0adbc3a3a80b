"""Why an MCP tool the model calls is not there: its server failed, is off, or is gone."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ohtui.sdk.event.llm_convertible.action import ActionEvent
from ohtui.sdk.mcp.definition import MCPToolAction, mcp_tool_name

if TYPE_CHECKING:
    from ohtui.sdk.event.base import Event
    from ohtui.sdk.mcp.manager import MCPClientManager

HISTORY_SCAN = 500
"""Newest events searched for an earlier call of the tool (its server's name)."""


def missing_mcp_tool(name: str, events: Sequence[Event], manager: MCPClientManager | None) -> str:
    """A clause for "There is no tool named 'x'…": the MCP server the tool came from (an
    earlier call in the history says which) and why it is not available now; "" when the
    tool never came from an MCP server. A tool called by its name of before MCP tools were
    named `server_tool` is told its name now."""
    server = tool = None
    for index in range(len(events) - 1, max(-1, len(events) - 1 - HISTORY_SCAN), -1):
        event = events[index]
        if (
            isinstance(event, ActionEvent)
            and event.tool_name == name
            and isinstance(event.action, MCPToolAction)
        ):
            server, tool = event.action.server, event.action.tool
            break
    if server is None or tool is None:
        return ""
    infos = {info.name: info for info in manager.servers()} if manager is not None else {}
    info = infos.get(server)
    renamed = mcp_tool_name(server, tool)
    if renamed != name and info is not None and any(t.name == tool for t in info.tools):
        return f": it is called '{renamed}' now"
    if info is None:
        return (
            f" now: it came from MCP server '{server}', which is not configured any more "
            "in this session"
        )
    return f" now: it came from MCP server '{server}', which is {info.summary}"
