"""MCP servers' tools as ToolDefinitions.

The official `mcp` SDK (1.x) is imported only on the client manager's own loop thread, when
the first server starts: importing this package costs nothing of it. Each module here (the
manager's with asyncio and all, the configuration's models) loads when one of its names is
first used.
"""

from typing import TYPE_CHECKING

from ohtui.sdk.utils.lazy import lazy_exports

if TYPE_CHECKING:
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

# Every name is imported on first use: a conversation without MCP servers reads at most
# the tool definition (its saved actions), never the configuration or the manager.
__getattr__ = lazy_exports(
    __name__,
    {
        "DEFAULT_CALL_TIMEOUT": "ohtui.sdk.mcp.config",
        "DEFAULT_STARTUP_TIMEOUT": "ohtui.sdk.mcp.config",
        "MCPApiKeyAuthCredential": "ohtui.sdk.mcp.server_config",
        "MCPAuthCredential": "ohtui.sdk.mcp.server_config",
        "MCPBasicAuthCredential": "ohtui.sdk.mcp.server_config",
        "MCPBearerAuthCredential": "ohtui.sdk.mcp.server_config",
        "MCPConfigError": "ohtui.sdk.mcp.config",
        "MCPHeaderAuthCredential": "ohtui.sdk.mcp.server_config",
        "MCPNoneAuthCredential": "ohtui.sdk.mcp.server_config",
        "MCPOAuthAuthCredential": "ohtui.sdk.mcp.server_config",
        "MCPOAuthAuthentication": "ohtui.sdk.mcp.server_config",
        "MCPServer": "ohtui.sdk.mcp.server_config",
        "MCPServerSpec": "ohtui.sdk.mcp.config",
        "MCPToolAction": "ohtui.sdk.mcp.definition",
        "MCPToolDefinition": "ohtui.sdk.mcp.definition",
        "MCPToolExecutor": "ohtui.sdk.mcp.definition",
        "MCPToolObservation": "ohtui.sdk.mcp.definition",
        "parse_server": "ohtui.sdk.mcp.config",
        "parse_servers": "ohtui.sdk.mcp.config",
        "server_table": "ohtui.sdk.mcp.config",
        **dict.fromkeys(
            ["MCPClientManager", "ServerInfo", "ServerStatus", "ToolInfo"], "ohtui.sdk.mcp.manager"
        ),
    },
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
