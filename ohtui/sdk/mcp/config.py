"""MCP server settings: `{"mcpServers": {name: spec}}` (or a bare `{name: spec}`) read into
checked specs, with errors that name the server and the field.

The JSON form is the convention other agent tools share (Claude Desktop, fastmcp, OpenHands):
stdio servers have `command`, `args`, `env`, `cwd`; streamable HTTP (or SSE) servers have
`url`, `headers` and an optional `transport` (alias `type`). ohtui adds `enabled`,
`startupTimeout` and `sandboxed` (a stdio server that runs in the conversation's sandbox).
`timeout` and `startupTimeout` are milliseconds, as in fastmcp. `auth` may be a bearer token
(fastmcp's form; an OAuth login is refused). Unknown fields are kept (and ignored). The
SDK's typed `MCPServer` (server_config.py) gives these settings through `to_settings()`.
Values of `env` and `headers` may name a conversation secret, `${NAME}` or `$NAME`: it is
filled in when the server starts, so the value is never saved with the settings or the
conversation.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlparse

from ohtui.sdk.mcp.secret_reference import SECRET_REFERENCE
from ohtui.sdk.mcp.server_config import OAUTH_SETTING, MCPServer

__all__ = [  # MCPServer too: the SDK's module path of it
    "DEFAULT_CALL_TIMEOUT",
    "DEFAULT_STARTUP_TIMEOUT",
    "SECRET_REFERENCE",
    "MCPConfigError",
    "MCPServer",
    "MCPServerSpec",
    "Transport",
    "parse_server",
    "parse_servers",
    "secret_names",
    "server_table",
]

Transport = Literal["stdio", "http", "sse"]

DEFAULT_CALL_TIMEOUT = 300.0
"""Seconds a tool call may take before the model is told it timed out."""
DEFAULT_STARTUP_TIMEOUT = 30.0
"""Seconds a server may take to start and answer `initialize`."""

_TRANSPORTS: dict[str, Transport] = {
    "stdio": "stdio",
    "http": "http",
    "streamable-http": "http",
    "streamable_http": "http",
    "streamablehttp": "http",
    "sse": "sse",
}
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


class MCPConfigError(ValueError):
    """An MCP server's settings are wrong; the message names the server and the field."""


@dataclass(frozen=True)
class MCPServerSpec:
    """One MCP server as configured."""

    name: str
    transport: Transport
    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    enabled: bool = True
    timeout: float = DEFAULT_CALL_TIMEOUT
    """Seconds one tool call may take."""
    startup_timeout: float = DEFAULT_STARTUP_TIMEOUT
    """Seconds the server may take to start and initialize."""
    sandboxed: bool = False
    """A stdio server runs inside the conversation's sandbox (as the agent's commands do)."""

    @property
    def target(self) -> str:
        """What it runs or reaches, for the user: the command line, or the URL."""
        if self.transport == "stdio":
            return " ".join([self.command or "", *self.args]).strip()
        return self.url or ""

    @property
    def short_target(self) -> str:
        """`target` with the program's folder left out (`python -m mcp_server_time`)."""
        if self.transport == "stdio":
            program = os.path.basename(self.command or "") or (self.command or "")
            return " ".join([program, *self.args]).strip()
        return self.url or ""


def server_table(data: Mapping[str, Any]) -> Mapping[str, Any]:
    """The servers of `{"mcpServers": {...}}`, or of a bare `{name: spec}`."""
    if "mcpServers" in data:
        servers = data["mcpServers"]
        if not isinstance(servers, Mapping):
            raise MCPConfigError(
                f'"mcpServers" must be an object of servers by name, not {type(servers).__name__}'
            )
        return servers
    return data


def parse_servers(data: Mapping[str, Any], where: str = "") -> dict[str, MCPServerSpec]:
    """Every server of `data` (either form), checked; MCPConfigError names the first problem
    (`where`: the file it came from, for the message)."""
    return {name: parse_server(name, spec, where) for name, spec in server_table(data).items()}


def parse_server(name: str, spec: object, where: str = "") -> MCPServerSpec:
    """One server's settings, checked; MCPConfigError names the server and the field."""
    at = f" in {where}" if where else ""

    def fail(field_name: str, problem: str) -> MCPConfigError:
        return MCPConfigError(f"MCP server '{name}'{at}: `{field_name}` {problem}")

    if not isinstance(name, str) or not _NAME.match(name):
        raise MCPConfigError(
            f"MCP server name {name!r}{at} must start with a letter or digit and hold only "
            "letters, digits, '-', '_' and '.'"
        )
    if not isinstance(spec, Mapping):
        raise MCPConfigError(
            f"MCP server '{name}'{at} must be an object of settings (command or url, ...), "
            f"not {type(spec).__name__}"
        )
    transport = _transport(spec, fail)
    enabled = spec.get("enabled", True)
    if not isinstance(enabled, bool):
        raise fail("enabled", f"must be true or false, not {enabled!r}")
    timeout = _millis(spec, "timeout", DEFAULT_CALL_TIMEOUT, fail)
    startup = _millis(spec, "startupTimeout", DEFAULT_STARTUP_TIMEOUT, fail)
    sandboxed = spec.get("sandboxed", False)
    if not isinstance(sandboxed, bool):
        raise fail("sandboxed", f"must be true or false, not {sandboxed!r}")
    if transport == "stdio":
        command = spec.get("command")
        if not isinstance(command, str) or not command.strip():
            raise fail("command", "is missing: a stdio server needs the program to run")
        args = spec.get("args", [])
        if not isinstance(args, list) or not all(isinstance(a, str | int | float) for a in args):
            raise fail("args", "must be a list of strings")
        cwd = spec.get("cwd")
        if cwd is not None and not isinstance(cwd, str):
            raise fail("cwd", "must be a folder path (a string)")
        return MCPServerSpec(
            name,
            "stdio",
            command=command,
            args=tuple(str(a) for a in args),
            env=_strings(spec, "env", fail),
            cwd=cwd,
            enabled=enabled,
            timeout=timeout,
            startup_timeout=startup,
            sandboxed=sandboxed,
        )
    url = spec.get("url")
    if not isinstance(url, str) or not url.strip():
        raise fail("url", f"is missing: a {transport} server needs its address")
    headers = _strings(spec, "headers", fail)
    auth = spec.get("auth")
    if auth == OAUTH_SETTING:
        raise fail(
            "auth",
            "asks for an OAuth login, which ohtui does not do: give a token in `headers` "
            '(e.g. "Authorization": "Bearer ${TOKEN}") instead',
        )
    if isinstance(auth, str) and auth.strip():  # fastmcp's bearer token
        headers.setdefault("Authorization", f"Bearer {auth}")
    elif auth is not None:
        raise fail("auth", f"must be a bearer token (a string), not {type(auth).__name__}")
    parsed = urlparse(url)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise fail("url", f"must be an http:// or https:// address, not {url!r}")
    return MCPServerSpec(
        name,
        transport,
        url=url,
        headers=headers,
        enabled=enabled,
        timeout=timeout,
        startup_timeout=startup,
    )


def _transport(spec: Mapping[str, Any], fail: Any) -> Transport:
    given = spec.get("transport", spec.get("type"))
    key = "transport" if "transport" in spec else "type"
    if given is None:
        if "command" in spec:
            return "stdio"
        url = spec.get("url")
        if isinstance(url, str):
            return "sse" if urlparse(url).path.rstrip("/").endswith("/sse") else "http"
        raise fail("command", "or `url` is missing: give the program to run or the address")
    if not isinstance(given, str) or given.lower() not in _TRANSPORTS:
        raise fail(key, f"must be one of stdio, http, streamable-http, sse, not {given!r}")
    return _TRANSPORTS[given.lower()]


def _millis(spec: Mapping[str, Any], key: str, default: float, fail: Any) -> float:
    value = spec.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise fail(key, f"must be a positive number of milliseconds, not {value!r}")
    return float(value) / 1000


def _strings(spec: Mapping[str, Any], key: str, fail: Any) -> dict[str, str]:
    value = spec.get(key, {})
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise fail(key, "must be a table of names to strings")
    out: dict[str, str] = {}
    for k, v in value.items():
        if not isinstance(v, str | int | float) or isinstance(v, bool):
            raise fail(f"{key}.{k}", f"must be a string, not {type(v).__name__}")
        out[str(k)] = str(v)
    return out


def secret_names(value: str) -> list[str]:
    """The secrets a setting's value names (`${NAME}` or `$NAME`)."""
    return [m.group(1) or m.group(2) for m in SECRET_REFERENCE.finditer(value)]
