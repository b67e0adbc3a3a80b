"""MCP tools as ToolDefinitions: the action, the observation, the definition and its executor.

Nothing here imports the `mcp` package: a resumed conversation's events name these classes,
and reading them must not cost the SDK's import (nor need the server to be there).
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import Field

from ohtui.sdk.llm.message import ImageContent, TextContent
from ohtui.sdk.mcp.secret_reference import SECRET_REFERENCE
from ohtui.sdk.tool.schema import Action, Observation
from ohtui.sdk.tool.tool import (
    SECURITY_RISK_DESC,
    SUMMARY_DESC,
    ToolArgumentError,
    ToolDefinition,
    ToolExecutor,
)
from ohtui.sdk.utils.json_schema import schema_problems

if TYPE_CHECKING:
    from rich.text import Text

    from ohtui.sdk.conversation.impl.local_conversation import LocalConversation
    from ohtui.sdk.conversation.secret_registry import SecretRegistry

RULE_PREFIX = "mcp:"
"""Approval rules name an MCP tool as `mcp:server/tool` (or `mcp:server/*`)."""
TOOL_NAME_LIMIT = 64
"""The longest tool name every LLM API takes (OpenAI: ^[a-zA-Z0-9_-]{1,64}$)."""
_NOT_IN_NAMES = re.compile(r"[^A-Za-z0-9_-]")


def mcp_tool_name(server: str, tool: str) -> str:
    """The name the model calls an MCP tool by: `server_tool`, as the OpenHands SDK names the
    tools of several servers, so no server's tool can take another's name.

    The same for the same server and tool on every start. A name with characters LLM APIs
    refuse (`.`, `/`, ...) has them replaced by `_` and a short hash of the real names added
    (`my.srv` and `my_srv` stay apart); one longer than TOOL_NAME_LIMIT is cut, with the hash.
    """
    plain = f"{server}_{tool}"
    name = _NOT_IN_NAMES.sub("_", plain)
    if name == plain and len(name) <= TOOL_NAME_LIMIT:
        return name
    digest = hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:8]
    return f"{name[: TOOL_NAME_LIMIT - len(digest) - 1]}_{digest}"


def tool_name_prefix(server: str) -> str:
    """What every name `mcp_tool_name` gives a tool of `server` starts with."""
    return (_NOT_IN_NAMES.sub("_", server) + "_")[: TOOL_NAME_LIMIT - 9]


class MCPToolAction(Action):
    """The arguments of one MCP tool call, as the model gave them (None values dropped)."""

    server: str = Field(default="", description="The MCP server that provides the tool.")
    tool: str = Field(default="", description="The tool's name on that server.")
    data: dict[str, Any] = Field(default_factory=dict, description="The tool's arguments.")
    read_only: bool = Field(
        default=False, description="Whether the server marks the tool read-only (readOnlyHint)."
    )

    @property
    def rule_names(self) -> tuple[str, ...]:
        """The names an approval rule may allow this call by: `mcp:server/tool` and
        `mcp:server/*`. Never the name the model calls it by (`server_tool`): server `a_b`'s
        tool `c` and server `a`'s tool `b_c` share it."""
        return (f"{RULE_PREFIX}{self.server}/{self.tool}", f"{RULE_PREFIX}{self.server}/*")

    @property
    def visualize(self) -> Text:
        """`server/tool` (the tool alone from a server that does not say which), then the
        arguments as JSON."""
        from rich.text import Text

        name = f"{self.server}/{self.tool}" if self.server else self.tool
        text = Text(f"{name}\n", style="bold")
        if self.data:
            text.append(json.dumps(self.data, indent=2, ensure_ascii=False))
        return text


class MCPToolObservation(Observation):
    """What an MCP tool returned: its text and images; `is_error` as the server said."""

    server: str = ""
    tool: str = ""


class MCPToolDefinition(ToolDefinition[MCPToolAction, MCPToolObservation]):
    """One tool of an MCP server, its schema and annotations passed through as the server
    gave them. `name` is what the model calls it (`mcp_tool_name`); `tool` its name on the
    server."""

    action_type: type[MCPToolAction] = MCPToolAction
    observation_type: type[MCPToolObservation] | None = MCPToolObservation
    description: str = "No description provided"
    server: str = Field(description="The MCP server that provides it.")
    tool: str = Field(default="", description="Its name on that server (default: `name`).")
    input_schema: dict[str, Any] = Field(default_factory=dict, description="MCP `inputSchema`.")
    output_schema: dict[str, Any] | None = Field(default=None, description="MCP `outputSchema`.")

    def action_from_arguments(self, arguments: dict[str, Any]) -> MCPToolAction:
        """Drop None values and check the rest against the server's `inputSchema`;
        ToolArgumentError says what is wrong, for the model."""
        data = {k: v for k, v in arguments.items() if v is not None}
        problems = schema_problems(self.input_schema, data)
        if problems:
            raise ToolArgumentError(
                f"Invalid arguments for tool '{self.name}' (MCP server '{self.server}'): "
                f"{'; '.join(problems)}. Expected parameters: "
                f"{sorted(self.input_schema.get('properties', {}))}."
            )
        return MCPToolAction(
            server=self.server, tool=self.server_name, data=data, read_only=self.is_read_only
        )

    @property
    def server_name(self) -> str:
        """Its name on its server."""
        return self.tool or self.name

    def to_mcp_tool(self) -> dict[str, Any]:
        """The tool as its server described it."""
        tool: dict[str, Any] = {
            "name": self.server_name,
            "description": self.description,
            "inputSchema": copy.deepcopy(self.input_schema),
        }
        if self.annotations is not None:
            tool["annotations"] = self.annotations
        if self.output_schema is not None:
            tool["outputSchema"] = copy.deepcopy(self.output_schema)
        return tool

    def _get_tool_schema(self, add_security_risk_prediction: bool = False) -> dict[str, Any]:
        """The server's own input schema (a copy), plus the risk rating and summary every
        call may carry."""
        schema = copy.deepcopy(self.input_schema)
        schema["type"] = "object"
        own = schema.get("properties") or {}
        extra: dict[str, Any] = {}
        if add_security_risk_prediction and not self.is_read_only:
            extra["security_risk"] = {
                "type": "string",
                "enum": ["LOW", "MEDIUM", "HIGH"],
                "description": SECURITY_RISK_DESC,
            }
            schema["required"] = [*schema.get("required", []), "security_risk"]
        if "summary" not in own:
            extra["summary"] = {"type": "string", "description": SUMMARY_DESC}
        schema["properties"] = {**extra, **{k: v for k, v in own.items() if k not in extra}}
        return schema


class MCPCaller(Protocol):
    """What runs MCP calls: the client manager."""

    def call(
        self, server: str, tool: str, arguments: dict[str, Any], timeout: float | None = None
    ) -> MCPToolObservation:
        """Call a tool and wait; every failure comes back as an error observation."""
        ...

    def cancel_calls(self, server: str | None = None) -> None:
        """Cancel the calls in flight (of one server, or all)."""
        ...


class MCPToolExecutor(ToolExecutor[MCPToolAction, MCPToolObservation]):
    """Sends the call to the server, with the conversation's secrets filled in, and masks
    them in what comes back."""

    def __init__(self, caller: MCPCaller, server: str, timeout: float | None = None) -> None:
        self._caller = caller
        self._server = server
        self._timeout = timeout

    def __call__(
        self, action: MCPToolAction, conversation: LocalConversation | None = None
    ) -> MCPToolObservation:
        """Call the tool; the observation says what the server answered or what went wrong."""
        registry = conversation.state.secret_registry if conversation is not None else None
        arguments = expand_secrets(action.data, registry) if registry is not None else action.data
        observation = self._caller.call(self._server, action.tool, arguments, self._timeout)
        return mask_observation(observation, registry) if registry is not None else observation

    def interrupt(self) -> None:
        """Cancel this server's calls in flight."""
        self._caller.cancel_calls(self._server)


def expand_secrets(data: Any, registry: SecretRegistry) -> Any:
    """`data` with `${NAME}` / `$NAME` references to the conversation's secrets filled in
    (in every string, at any depth); other `$` text stays as it is."""
    if isinstance(data, str):

        def value(match: Any) -> str:
            found = registry.get_secret_value(match.group(1) or match.group(2))
            return match.group(0) if found is None else found

        return SECRET_REFERENCE.sub(value, data) if "$" in data else data
    if isinstance(data, dict):
        return {k: expand_secrets(v, registry) for k, v in data.items()}
    if isinstance(data, list):
        return [expand_secrets(v, registry) for v in data]
    return data


def mask_observation(
    observation: MCPToolObservation, registry: SecretRegistry
) -> MCPToolObservation:
    """The observation with every secret value masked in its text."""
    if not registry.has_values:
        return observation
    content: list[TextContent | ImageContent] = [
        TextContent(text=registry.mask_secrets_in_output(part.text))
        if isinstance(part, TextContent)
        else part
        for part in observation.content
    ]
    return observation.model_copy(update={"content": content})
