"""MCP servers' tools as ToolDefinitions.

The official `mcp` SDK (1.x) is imported only on the client manager's own loop thread, when
the first server starts: importing this package costs nothing of it. The manager's own
module (asyncio and all) loads when one of its names is first used.
"""

from typing import TYPE_CHECKING

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
from ohtui.sdk.mcp.server_config import (
    MCPApiKeyAuthCredential,
    MCPAuthCredential,
    MCPBasicAuthCredential,
    MCPBearerAuthCredential,
    MCPHeaderAuthCredential,
    MCPNoneAuthCredential,
    MCPOAuthAuthCredential,
    MCPOAuthAuthentication,
    MCPServer,
)
from ohtui.sdk.utils.lazy import lazy_exports

if TYPE_CHECKING:
    from ohtui.sdk.mcp.manager import MCPClientManager, ServerInfo, ServerStatus, ToolInfo

# The manager's names, imported on first use.
__getattr__ = lazy_exports(
    __name__,
    dict.fromkeys(
        ["MCPClientManager", "ServerInfo", "ServerStatus", "ToolInfo"], "ohtui.sdk.mcp.manager"
    ),
)


__all__ = [
    "DEFAULT_CALL_TIMEOUT",
    "DEFAULT_STARTUP_TIMEOUT",
    "MCPApiKeyAuthCredential",
    "MCPAuthCredential",
    "MCPBasicAuthCredential",
    "MCPBearerAuthCredential",
    "MCPClientManager",
    "MCPConfigError",
    "MCPHeaderAuthCredential",
    "MCPNoneAuthCredential",
    "MCPOAuthAuthCredential",
    "MCPOAuthAuthentication",
    "MCPServer",
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
