"""The MCP servers an ACP client passes in `session/new` and `session/load`, in the
mcpServers form ohtui's settings use (stdio: command, args, env; http and sse: url,
headers). Each is the user's choice in the client, so it needs no trust of ohtui's; ohtui's
own servers of the same name win.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from acp.schema import AcpMcpServer, HttpMcpServer, McpServerStdio, SseMcpServer

ClientServer = HttpMcpServer | SseMcpServer | AcpMcpServer | McpServerStdio


class ClientMcpError(ValueError):
    """A server ohtui cannot start as given (the message names it)."""


def client_servers(servers: Sequence[ClientServer] | None) -> dict[str, dict[str, Any]]:
    """The client's servers by name, as settings."""
    specs: dict[str, dict[str, Any]] = {}
    for server in servers or ():
        if isinstance(server, McpServerStdio):
            specs[server.name] = {
                "command": server.command,
                "args": list(server.args),
                "env": {variable.name: variable.value for variable in server.env},
            }
        elif isinstance(server, HttpMcpServer | SseMcpServer):
            specs[server.name] = {
                "url": server.url,
                "transport": server.type,
                "headers": {header.name: header.value for header in server.headers},
            }
        else:
            raise ClientMcpError(
                f"MCP server '{server.name}' is reached through the client (the \"acp\" "
                "transport), which ohtui does not support: pass it as stdio, http or sse"
            )
    return specs
