"""How an MCP server's failures are told: its stderr's tail, a startup error in words, a
lost session, an error observation for the model."""

from __future__ import annotations

import asyncio
import tempfile
from typing import Any, TextIO

from ohtui.sdk.mcp.config import MCPServerSpec
from ohtui.sdk.mcp.definition import (
    MCPToolObservation,
)

STDERR_TAIL = 800
"""Characters of a failed server's stderr shown to the user."""


class SettingError(Exception):
    """A server's settings cannot be used as they are (a missing secret)."""


def stderr_file() -> TextIO:
    """Where a stdio server's stderr goes (never the terminal): a temporary file."""
    return tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")


def stderr_tail(errlog: TextIO | None) -> str:
    """The last lines the server wrote to stderr, for the user."""
    if errlog is None:
        return ""
    try:
        errlog.flush()
        errlog.seek(0)
        text = errlog.read().strip()
    except (OSError, ValueError):
        return ""
    if not text:
        return ""
    return "stderr: " + (text[-STDERR_TAIL:] if len(text) > STDERR_TAIL else text)


def startup_error(exc: BaseException, spec: MCPServerSpec) -> str:
    """Why a server did not start, in words."""
    leaf = leaf_error(exc)
    if isinstance(leaf, TimeoutError):
        return f"did not answer `initialize` within {spec.startup_timeout:g} s"
    if isinstance(leaf, SettingError):
        return str(leaf)
    if isinstance(leaf, FileNotFoundError):
        return f"`command` {spec.command!r} was not found: install it or fix the path"
    if isinstance(leaf, PermissionError):
        return f"`command` {spec.command!r} cannot be run: {leaf.strerror or leaf}"
    if spec.transport != "stdio" and type(leaf).__module__.startswith("httpx"):
        return f"cannot reach `url` {spec.url}: {reason_of(leaf)}"
    if isinstance(leaf, asyncio.CancelledError):
        return "stopped while starting"
    if "connection closed" in str(leaf).lower():
        return "exited before answering `initialize`"
    return f"failed to start: {reason_of(leaf)}"


def leaf_error(exc: BaseException) -> BaseException:
    """The first real error inside (nested) exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


SESSION_TERMINATED = 32600
"""The code the SDK's HTTP client gives a call when the server no longer knows the session
(HTTP 404: it restarted, or let the session expire)."""


def session_gone(error: Any) -> bool:
    """Whether an McpError says the session is over, rather than refusing this call."""
    data = getattr(error, "error", None)
    if getattr(data, "code", None) == SESSION_TERMINATED:
        return True
    return "closed" in str(getattr(data, "message", error)).lower()


def reason_of(exc: BaseException) -> str:
    leaf = leaf_error(exc)
    text = str(leaf).strip()
    if not text:
        return type(leaf).__name__
    if type(leaf).__module__.startswith(("builtins", "ohtui")):
        return text
    return f"{type(leaf).__name__}: {text}"


def error_observation(server: str, tool: str, text: str) -> MCPToolObservation:
    return MCPToolObservation.from_text(text, is_error=True, server=server, tool=tool)
