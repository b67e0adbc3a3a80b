"""What the user sees of an MCP server: its status, its tools and a one-line summary."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from ohtui.sdk.mcp.config import MCPServerSpec
from ohtui.sdk.tool.tool import ToolAnnotations


class ServerStatus(StrEnum):
    """Where a server is (its value is the word the user sees)."""

    STARTING = "starting"
    READY = "ready"
    FAILED = "failed"
    DISABLED = "disabled"

    @property
    def settled(self) -> bool:
        """Whether the server is done starting (ready, failed or off)."""
        return self is not ServerStatus.STARTING


@dataclass(frozen=True)
class ToolInfo:
    """One tool a server offers, as it described it."""

    name: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None = None
    annotations: ToolAnnotations | None = None

    @property
    def read_only(self) -> bool:
        """Whether the server marks it read-only."""
        return bool(self.annotations and self.annotations.readOnlyHint)


@dataclass(frozen=True)
class ServerInfo:
    """What the user sees of a server: its status, why it failed, its tools."""

    name: str
    spec: MCPServerSpec | None
    status: ServerStatus
    tools: tuple[ToolInfo, ...] = ()
    error: str | None = None
    server_version: str | None = None
    initialized_at: float | None = None
    """When `initialize` was answered (time.monotonic)."""
    ready_at: float | None = None
    """When its tools were listed and offered (time.monotonic)."""
    confined: str = ""
    """The sandbox it runs in ("workspace-write, no network"); "" for none."""

    @property
    def summary(self) -> str:
        """One line: `ready, 2 tools`, `failed: why`, `starting`, `disabled`."""
        if self.status is ServerStatus.READY:
            n = len(self.tools)
            return f"ready, {n} tool{'s' if n != 1 else ''}"
        if self.status is ServerStatus.FAILED:
            return f"failed: {(self.error or 'unknown error').splitlines()[0]}"
        return self.status.value
