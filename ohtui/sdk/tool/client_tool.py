"""Client-defined tools: tools described in JSON by a client and carried out by that client.

A front end (a browser page, an app) gives a `ClientToolSpec` (name, description, JSON
schema of the arguments). The agent sees the tool like any other; when it calls it, the
`ActionEvent` goes to the conversation's callbacks (or over the server's WebSocket) for the
client to act on, and the tool answers at once with an acknowledgment so the run goes on.

The schema travels with the conversation, in the agent's `Tool(name, params={"spec": ...})`,
so a resumed conversation (here or on a server) builds the same tool again; the class
registered under each name is a stateless resolver.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ohtui.sdk.tool.schema import Action, Observation
from ohtui.sdk.tool.spec import Tool
from ohtui.sdk.tool.tool import ToolAnnotations, ToolArgumentError, ToolDefinition, ToolExecutor
from ohtui.sdk.utils.json_schema import schema_problems

if TYPE_CHECKING:
    from rich.text import Text

    from ohtui.sdk.conversation.impl.local_conversation import LocalConversation
    from ohtui.sdk.conversation.state import ConversationState

ACKNOWLEDGMENT = "Tool call dispatched to client."
"""What the agent reads back from a client tool: the client does the work."""

_lock = threading.Lock()
_client_tool_names: set[str] = set()
"""Names registered as client tools in this process (another tool's name is refused)."""


class ClientToolRegistrationError(ValueError):
    """The client tools given cannot be registered (a duplicate or a taken name)."""


class ClientToolSpec(BaseModel):
    """A tool the client defines and carries out: what the agent is told about it."""

    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")

    name: str = Field(min_length=1, description="The name the agent calls the tool by.")
    description: str = Field(description="When and how to use the tool, for the model.")
    parameters: dict[str, Any] = Field(
        default_factory=lambda: {"type": "object", "properties": {}},
        description="JSON Schema of the tool's arguments: an object schema.",
    )
    annotations: ToolAnnotations | None = Field(
        default=None,
        description="MCP-style hints; without them the tool is taken to change things (the "
        "agent rates each call's risk).",
    )

    @field_validator("parameters")
    @classmethod
    def _object_schema(cls, value: dict[str, Any]) -> dict[str, Any]:
        if value.get("type") != "object":
            raise ValueError(
                "ClientToolSpec.parameters must be an object JSON schema, e.g. "
                f'{{"type": "object", "properties": {{...}}}} (got type={value.get("type")!r})'
            )
        return value


class ClientToolAction(Action):
    """One call of a client tool: the model's arguments, as its fields (`model_dump()` gives
    them back as the client's schema names them)."""

    model_config = ConfigDict(defer_build=True, frozen=True, extra="allow")

    @property
    def arguments(self) -> dict[str, Any]:
        """The arguments the model gave."""
        return dict(self.__pydantic_extra__ or {})

    @property
    def visualize(self) -> Text:
        """The arguments, one per line."""
        from rich.text import Text

        text = Text("client tool call\n", style="bold")
        for name, value in self.arguments.items():
            text.append(f"{name}: ", style="bold")
            text.append(f"{value}\n")
        return text


class ClientToolObservation(Observation):
    """The acknowledgment a client tool answers with: the client carries the call out."""


class ClientToolExecutor(ToolExecutor[ClientToolAction, ClientToolObservation]):
    """Acknowledges the call; the client, watching the events, does the work."""

    def __call__(
        self, action: ClientToolAction, conversation: LocalConversation | None = None
    ) -> ClientToolObservation:
        """The acknowledgment."""
        return ClientToolObservation.from_text(ACKNOWLEDGMENT)


class ClientTool(ToolDefinition[ClientToolAction, ClientToolObservation]):
    """A tool built from a ClientToolSpec; its schema is the client's, passed through."""

    input_schema: dict[str, Any] = Field(description="The client's JSON schema, verbatim.")

    @classmethod
    def create(cls, conv_state: ConversationState | None = None, **params: Any) -> Sequence[Self]:
        """The tool for `spec=` (a ClientToolSpec or its JSON)."""
        spec = params.get("spec")
        if isinstance(spec, dict):
            spec = ClientToolSpec.model_validate(spec)
        if not isinstance(spec, ClientToolSpec):
            raise ValueError(
                "a client tool is made from spec=ClientToolSpec(...) (or its JSON), got "
                f"{type(spec).__name__}"
            )
        tool = cls(  # type: ignore[call-arg]  # an instance's own name (ToolDefinition)
            name=spec.name,
            description=spec.description,
            action_type=ClientToolAction,
            observation_type=ClientToolObservation,
            annotations=spec.annotations,
            input_schema=copy.deepcopy(spec.parameters),
            executor=ClientToolExecutor(),
        )
        return [tool]

    @classmethod
    def from_spec(cls, spec: ClientToolSpec) -> ClientTool:
        """The tool for one spec."""
        return cls.create(spec=spec)[0]

    def action_from_arguments(self, arguments: dict[str, Any]) -> ClientToolAction:
        """The model's arguments checked against the client's schema; ToolArgumentError says
        what is wrong, for the model."""
        data = {k: v for k, v in arguments.items() if v is not None and k != "kind"}
        problems = schema_problems(self.input_schema, data)
        if problems:
            raise ToolArgumentError(
                f"Invalid arguments for tool '{self.name}': {'; '.join(problems)}. Expected "
                f"parameters: {sorted(self.input_schema.get('properties', {}))}."
            )
        return ClientToolAction(**data)

    def to_mcp_tool(self) -> dict[str, Any]:
        """The tool with the client's own input schema."""
        tool = super().to_mcp_tool()
        tool["inputSchema"] = copy.deepcopy(self.input_schema)
        return tool

    def _get_tool_schema(self, add_security_risk_prediction: bool = False) -> dict[str, Any]:
        """The client's schema (a copy), with the risk rating and summary every call may
        carry put first."""
        base = super()._get_tool_schema(add_security_risk_prediction)
        schema = copy.deepcopy(self.input_schema)
        own = schema.get("properties") or {}
        extra = {k: v for k, v in base["properties"].items() if k in ("security_risk", "summary")}
        schema["properties"] = {**extra, **{k: v for k, v in own.items() if k not in extra}}
        if "security_risk" in extra and "security_risk" in base.get("required", []):
            schema["required"] = [*schema.get("required", []), "security_risk"]
        return schema


def client_tool_specs(tools: Sequence[Tool]) -> list[ClientToolSpec]:
    """The ClientToolSpecs carried in an agent's tool specs (`params["spec"]` naming the
    tool itself): what a resumed conversation registers again."""
    specs = []
    for tool in tools:
        raw = tool.params.get("spec")
        if not isinstance(raw, dict):
            continue
        try:
            spec = ClientToolSpec.model_validate(raw)
        except ValidationError:
            continue
        if spec.name == tool.name:
            specs.append(spec)
    return specs


def register_client_tools(specs: Sequence[ClientToolSpec]) -> list[Tool]:
    """Register client tools by name and return the tool specs to give the agent.

    ClientToolRegistrationError for a name given twice, or the name of a tool that is not
    a client tool.
    """
    from ohtui.sdk.tool.registry import list_registered_tools, register_tool

    names = [spec.name for spec in specs]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ClientToolRegistrationError(
            f"client tool names must be unique: {', '.join(twice)} given more than once"
        )
    with _lock:
        taken = set(list_registered_tools()) - _client_tool_names
        clashes = sorted(set(names) & taken)
        if clashes:
            raise ClientToolRegistrationError(
                f"client tool name {', '.join(clashes)} is the name of another tool: give the "
                "client tool a name of its own"
            )
        for name in names:
            if name not in _client_tool_names:
                register_tool(name, ClientTool)
                _client_tool_names.add(name)
    return [Tool(name=spec.name, params={"spec": spec.model_dump(mode="json")}) for spec in specs]


def with_client_tools(tools: Sequence[Tool], specs: Sequence[ClientToolSpec]) -> list[Tool]:
    """`tools` with the client tools `specs` registered and put in (replacing a tool spec
    of the same name), and those already carried registered again."""
    given = {spec.name for spec in specs}
    carried = [s for s in client_tool_specs(tools) if s.name not in given]
    added = register_client_tools([*carried, *specs])[len(carried) :]
    return [*(t for t in tools if t.name not in given), *added]
