"""MCP servers' tools as ToolDefinitions.

The official `mcp` SDK (1.x) is imported only on the client manager's own loop thread, when
the first server starts: importing this package costs nothing of it.
"""

from ohtui.sdk.mcp.config import (
    DEFAULT_CALL_TIMEOUT,
    DEFAULT_STARTUP_TIMEOUT,
    MCPConfigError,
    MCPServerSpec,
    parse_server,
    parse_servers,
    server_table,
)
from ohtui.sdk.mcp.definition import (
    MCPToolAction,
    MCPToolDefinition,
    MCPToolExecutor,
    MCPToolObservation,
)
from ohtui.sdk.mcp.manager import MCPClientManager, ServerInfo, ServerStatus, ToolInfo

__all__ = [
    "DEFAULT_CALL_TIMEOUT",
    "DEFAULT_STARTUP_TIMEOUT",
    "MCPClientManager",
    "MCPConfigError",
    "MCPServerSpec",
    "MCPToolAction",
    "MCPToolDefinition",
    "MCPToolExecutor",
    "MCPToolObservation",
    "ServerInfo",
    "ServerStatus",
    "ToolInfo",
    "parse_server",
    "parse_servers",
    "server_table",
]
