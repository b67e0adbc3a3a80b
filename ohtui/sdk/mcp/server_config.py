"""MCPServer: one MCP server's settings as a typed model (the SDK's `openhands.sdk.mcp`
names), with its credentials.

ohtui's MCP client reads the plain settings of `.mcp.json` (`config.parse_server`); an
agent given MCPServer values keeps them in that form (`to_settings`), so typed and JSON
settings, plugins' and the user's, all meet in one table.
"""

from __future__ import annotations

import base64
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator

MCPTransport = Literal["stdio", "http", "streamable-http", "sse"]


class _Credential(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="forbid")  # built on first use

    def to_http_headers(self) -> dict[str, str] | None:
        """The headers that authenticate a request (None: not done with headers)."""
        return {}


class MCPNoneAuthCredential(_Credential):
    """No authentication."""

    strategy: Literal["none"]


class MCPApiKeyAuthCredential(_Credential):
    """An API key, in `header_name` (by default as `Authorization: Bearer <key>`)."""

    strategy: Literal["api_key"]
    value: SecretStr | None = None
    header_name: str | None = None

    def to_http_headers(self) -> dict[str, str] | None:
        if self.value is None:
            return {}
        key = self.value.get_secret_value()
        return {self.header_name: key} if self.header_name else _bearer(key)


class MCPBearerAuthCredential(_Credential):
    """A bearer token: `Authorization: Bearer <token>`."""

    strategy: Literal["bearer"]
    value: SecretStr | None = None

    def to_http_headers(self) -> dict[str, str] | None:
        return _bearer(self.value.get_secret_value()) if self.value is not None else {}


class MCPBasicAuthCredential(_Credential):
    """HTTP basic authentication."""

    strategy: Literal["basic"]
    username: str
    password: SecretStr | None = None

    def to_http_headers(self) -> dict[str, str] | None:
        if self.password is None:
            return {}
        pair = f"{self.username}:{self.password.get_secret_value()}".encode()
        return {"Authorization": f"Basic {base64.b64encode(pair).decode('ascii')}"}


class MCPHeaderAuthCredential(_Credential):
    """Headers of one's own choosing."""

    strategy: Literal["header"]
    headers: dict[str, SecretStr] = Field(default_factory=dict)

    def to_http_headers(self) -> dict[str, str] | None:
        return {name: value.get_secret_value() for name, value in self.headers.items()}


class MCPOAuthAuthentication(BaseModel):
    """How an OAuth login would register its client (kept, not used: see MCPOAuthAuthCredential)."""

    model_config = ConfigDict(defer_build=True, extra="forbid")  # built on first use

    type: Literal["oauth"]
    client_auth_method: (
        Literal["none", "client_secret_post", "client_secret_basic", "private_key_jwt"] | None
    ) = None
    scopes: str | list[str] | None = None
    client_name: str | None = None
    client_metadata_url: str | None = None
    client_id: str | None = None
    client_secret: SecretStr | None = None
    additional_client_metadata: dict[str, Any] | None = None


class MCPOAuthAuthCredential(_Credential):
    """An OAuth login. ohtui does not log in to MCP servers: a server configured so is
    listed as failed, saying to give a token instead."""

    model_config = ConfigDict(extra="allow")

    strategy: Literal["oauth2"]
    authentication: MCPOAuthAuthentication | None = None

    def to_http_headers(self) -> dict[str, str] | None:
        return None


MCPAuthCredential = Annotated[
    MCPNoneAuthCredential
    | MCPApiKeyAuthCredential
    | MCPBearerAuthCredential
    | MCPBasicAuthCredential
    | MCPHeaderAuthCredential
    | MCPOAuthAuthCredential,
    Field(discriminator="strategy"),
]
"""A server's credential, by its `strategy`."""

OAUTH_SETTING = "oauth"
"""`auth` of a server whose credential is an OAuth login (fastmcp's spelling)."""


class MCPServer(BaseModel):
    """One MCP server: a program run over stdio (`command`, `args`, `env`, `cwd`) or a
    remote one (`url`, `headers`, `auth`). `timeout` is in milliseconds, as in `.mcp.json`."""

    model_config = ConfigDict(defer_build=True, extra="forbid")  # built on first use

    url: str | None = Field(default=None, min_length=1)
    transport: MCPTransport | None = None
    command: str | None = Field(default=None, min_length=1)
    args: list[str] | None = None
    env: dict[str, SecretStr] | None = None
    cwd: str | None = None
    description: str | None = None
    icon: str | None = None
    timeout: float | None = None
    sse_read_timeout: float | None = None
    keep_alive: bool | None = None
    headers: dict[str, SecretStr] | None = None
    auth: MCPAuthCredential | None = None
    enabled: bool = Field(default=True, description="Whether the agent gets its tools.")

    @model_validator(mode="after")
    def _complete(self) -> MCPServer:
        if self.transport == "stdio" and not self.command:
            raise ValueError("a stdio MCP server needs 'command': the program to run")
        if self.transport in ("http", "streamable-http", "sse") and not self.url:
            raise ValueError(f"a {self.transport} MCP server needs 'url': its address")
        if not self.command and not self.url:
            raise ValueError("an MCP server needs 'command' (a program to run) or 'url'")
        if self.auth is not None and any(k.lower() == "authorization" for k in self.headers or {}):
            raise ValueError(
                "'auth' cannot be combined with an 'Authorization' header; use "
                "auth={'strategy': 'header', 'headers': {...}} instead"
            )
        return self

    def to_settings(self) -> dict[str, Any]:
        """The server as `.mcp.json` settings (what ohtui's MCP client reads), secret
        values in clear: the credential becomes headers."""
        data = self.model_dump(exclude_none=True, exclude={"env", "headers", "auth"})
        if self.env is not None:
            data["env"] = {k: v.get_secret_value() for k, v in self.env.items()}
        headers = {k: v.get_secret_value() for k, v in (self.headers or {}).items()}
        if self.auth is not None:
            auth_headers = self.auth.to_http_headers()
            if auth_headers is None:
                data["auth"] = OAUTH_SETTING
            else:
                headers.update(auth_headers)
        if headers:
            data["headers"] = headers
        return data


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}
