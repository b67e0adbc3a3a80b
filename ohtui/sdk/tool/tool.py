"""ToolDefinition and ToolExecutor: what the model may call, and the code that runs it."""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Protocol, Self, TypeVar, cast

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ModelWrapValidatorHandler,
    SerializerFunctionWrapHandler,
    ValidationError,
    field_serializer,
    field_validator,
    model_serializer,
    model_validator,
)

from ohtui.sdk.tool.response_schema import (
    ResponseSchema,
    ResponseSchemaError,
    parameters_of,
    parse_output,
    split_arguments,
)
from ohtui.sdk.tool.schema import Action, Observation, Schema
from ohtui.sdk.utils.models import DiscriminatedUnionMixin

if TYPE_CHECKING:
    from ohtui.sdk.conversation.impl.local_conversation import LocalConversation
    from ohtui.sdk.conversation.state import ConversationState

ActionT = TypeVar("ActionT", bound=Action)
ObservationT = TypeVar("ObservationT", bound=Observation)
SchemaT = TypeVar("SchemaT", bound=Schema)

SECURITY_RISK_DESC = (
    "Your own rating of this action's risk: LOW (read-only or easily undone), MEDIUM "
    "(changes files in the workspace), HIGH (destructive, irreversible, or touching the "
    "system, credentials or the network)."
)
SUMMARY_DESC = (
    "Optional: about ten words on what this call does, shown to the user "
    "(e.g. 'Run the parser's unit tests')."
)


def tool_name_of(class_name: str) -> str:
    """The name a ToolDefinition subclass gets by default: `FileEditorTool` -> `file_editor`."""
    return _camel_to_snake(class_name).removesuffix("_tool")


def _camel_to_snake(name: str) -> str:
    """`FileEditorTool` -> `file_editor_tool`; a run of capitals is one word (`XMLParser`)."""
    words = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)  # XMLParser -> XML_Parser
    words = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", words)  # FileEditor -> File_Editor
    return words.lower()


def _schema_class(base: type[SchemaT], value: Any) -> type[SchemaT]:
    found = base.resolve_kind(value) if isinstance(value, str) else value
    if not (isinstance(found, type) and issubclass(found, base)):
        raise ValueError(f"expected a subclass of {base.__name__} or its name, got {value!r}")
    return found


class ToolAnnotations(BaseModel):
    """Hints about a tool's behaviour, as in the MCP specification."""

    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")

    title: str | None = None
    readOnlyHint: bool = False  # noqa: N815 - MCP's field names
    destructiveHint: bool = True  # noqa: N815
    idempotentHint: bool = False  # noqa: N815
    openWorldHint: bool = True  # noqa: N815


class ToolExecutor(ABC, Generic[ActionT, ObservationT]):
    """Runs one tool's actions. Executors may hold resources; `close` releases them."""

    @abstractmethod
    def __call__(
        self, action: ActionT, conversation: LocalConversation | None = None
    ) -> ObservationT:
        """Execute `action` and return what happened."""

    def interrupt(self) -> None:
        """Stop the action running now, if any, from another thread. Default: nothing to stop."""

    def pause(self) -> None:
        """Pause what the running action started (a sub-agent's conversation), from another
        thread, when the conversation is paused. Default: nothing to pause."""

    def close(self) -> None:
        """Release resources (processes, files). Must be idempotent."""


@dataclass(frozen=True, slots=True)
class DeclaredResources:
    """What an action of a tool touches, for running tool calls in parallel.

    `declared=False` (the default): unknown, so calls of that tool run one at a time;
    `declared=True` with no keys: nothing shared, run freely; with keys (`"file:/a.py"`):
    calls holding a common key run one at a time.
    """

    keys: tuple[str, ...] = ()
    declared: bool = False


class ExecutableTool(Protocol):
    """A tool known to have an executor, as returned by `ToolDefinition.as_executable`."""

    name: str
    executor: ToolExecutor[Any, Any]

    def __call__(
        self, action: Action, conversation: LocalConversation | None = None
    ) -> Observation:
        """Run the action through the executor."""
        ...


class ToolArgumentError(ValueError):
    """The model's arguments for a tool did not match its schema."""


class ToolDefinition(DiscriminatedUnionMixin, Generic[ActionT, ObservationT]):
    """A tool the agent can call: its name, description, argument schema and executor.

    Subclass it and implement `create`. The name is the class name in snake case without
    "Tool" (`FileEditorTool` is "file_editor") unless the subclass sets `name: ClassVar[str]`;
    an instance built with `name=...` carries a name of its own.
    """

    model_config = ConfigDict(
        defer_build=True, frozen=True, extra="forbid", arbitrary_types_allowed=True
    )

    name: ClassVar[str] = ""

    description: str = Field(description="What the tool does and when to use it, for the model.")
    action_type: type[ActionT] = Field(repr=False, description="The arguments' Action class.")
    observation_type: type[ObservationT] | None = Field(
        default=None, repr=False, description="The result's Observation class, if declared."
    )
    annotations: ToolAnnotations | None = None
    meta: dict[str, Any] | None = Field(default=None, description="MCP `_meta` of the tool.")
    executor: ToolExecutor[Any, Any] | None = Field(default=None, repr=False, exclude=True)
    response_schema: ResponseSchema | None = Field(
        default=None,
        repr=False,
        exclude=True,
        description="Fields the model must fill on every call, kept as the action's "
        "structured_output (see `set_response_schema`).",
    )

    def __class_getitem__(cls, params: Any) -> Any:
        # The type parameters are for type checkers only, as in the SDK: any Action class is
        # accepted at run time, and a parametrised pydantic model would be a new model class
        # built at import for every tool.
        return cls

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        if "name" not in cls.__dict__:
            cls.name = tool_name_of(cls.__name__)

    @model_validator(mode="wrap")
    @classmethod
    def _take_own_name(cls, data: Any, handler: ModelWrapValidatorHandler[Self]) -> Self:
        name = None
        if isinstance(data, dict) and "name" in data:
            data = dict(data)
            name = data.pop("name")
        tool = handler(data)
        if name is not None and name != tool.name:
            if not isinstance(name, str) or not name:
                raise ValueError(f"a tool's name must be a non-empty string, got {name!r}")
            # `name` is a class attribute; an instance's own name shadows it, as
            # model_copy(update={"name": ...}) does.
            tool.__dict__["name"] = name
        if not tool.name:
            raise ValueError(
                f"{type(tool).__name__} has no name: pass name=... or subclass ToolDefinition"
            )
        return tool

    @model_serializer(mode="wrap")
    def _dump_with_name(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return {"name": self.name, **handler(self)}

    # Given as the class or by its kind (in JSON).
    @field_validator("action_type", mode="plain")
    @classmethod
    def _action_class(cls, value: Any) -> type[Action]:
        return _schema_class(Action, value)

    @field_validator("observation_type", mode="plain")
    @classmethod
    def _observation_class(cls, value: Any) -> type[Observation] | None:
        return None if value is None else _schema_class(Observation, value)

    @field_serializer("action_type", "observation_type")
    def _dump_type_as_kind(self, value: type[Action] | None) -> str | None:
        return None if value is None else value.__name__

    @classmethod
    def create(cls, conv_state: ConversationState | None = None, **params: Any) -> Sequence[Self]:
        """Build the tool(s) for one conversation. Subclasses implement it."""
        raise NotImplementedError(f"{cls.__name__} does not implement create()")

    @classmethod
    def is_usable(cls) -> bool:
        """Whether the tool can run here (e.g. its program is installed). Default: yes."""
        return True

    @property
    def is_read_only(self) -> bool:
        """Whether the tool declares that it changes nothing."""
        return bool(self.annotations and self.annotations.readOnlyHint)

    def __deepcopy__(self, memo: dict[int, Any] | None = None) -> Self:
        """A deep copy of the definition that shares the executor: an executor is a live
        resource (a shell, a server session), not data, and cannot be duplicated."""
        memo = {} if memo is None else memo
        if self.executor is not None:
            memo[id(self.executor)] = self.executor
        return super().__deepcopy__(memo)

    def set_executor(self, executor: ToolExecutor[Any, Any]) -> Self:
        """A copy of this tool that runs its actions with `executor`."""
        return self.model_copy(update={"executor": executor})

    def as_executable(self) -> ExecutableTool:
        """This tool, typed as having an executor; NotImplementedError when it has none."""
        if self.executor is None:
            raise NotImplementedError(f"Tool '{self.name}' has no executor")
        return cast(ExecutableTool, self)

    def declared_resources(self, action: Action) -> DeclaredResources:
        """What `action` touches (see DeclaredResources); by default undeclared, so this
        tool's calls never run at the same time as each other."""
        return DeclaredResources(keys=(), declared=False)

    def set_response_schema(self, response_schema: ResponseSchema | None) -> Self:
        """A copy of this tool whose calls must also fill `response_schema`'s fields (a
        pydantic model class or a JSON schema of an object); None removes it.

        ValueError when the schema cannot be used, or names a field the tool has already.
        """
        if response_schema is None:
            return self.model_copy(update={"response_schema": None})
        added = set(parameters_of(response_schema)["properties"])
        own = set(
            self.model_copy(update={"response_schema": None})._get_tool_schema(True)["properties"]
        )
        clash = added & own
        if clash:
            raise ResponseSchemaError(
                f"response_schema fields {sorted(clash)} collide with the parameters of tool "
                f"'{self.name}' ({self.action_type.__name__}): rename them"
            )
        return self.model_copy(update={"response_schema": response_schema})

    def parse_response(self, action: Action) -> BaseModel | dict[str, Any]:
        """The structured output of one of this tool's actions: an instance of the response
        schema's model (or the dict, for a JSON schema). ValueError when there is none."""
        if self.response_schema is None:
            raise ValueError(
                f"Tool '{self.name}' has no response_schema: give one in its spec, "
                "Tool(name=..., params={'response_schema': Model})"
            )
        output = action.structured_output
        if output is None:
            raise ValueError(f"Action '{type(action).__name__}' has no structured output")
        return parse_output(self.response_schema, output)

    def parse_last_response(self, events: Sequence[Any]) -> BaseModel | dict[str, Any] | None:
        """The structured output of this tool's latest action in `events` (None if the tool
        has not been called, or its call carried none). It is read from the recorded call's
        arguments, so it is there in a resumed conversation too."""
        import json

        if self.response_schema is None:
            return None
        for event in reversed(events):
            # An ActionEvent, read by its fields: events are a layer above tools.
            call = getattr(event, "tool_call", None)
            if (
                call is not None
                and getattr(event, "tool_name", None) == self.name
                and getattr(event, "action", None) is not None
            ):
                arguments = json.loads(call.arguments or "{}")
                _, output = split_arguments(self.response_schema, arguments)
                return parse_output(self.response_schema, output)
        return None

    def action_from_arguments(self, arguments: dict[str, Any]) -> ActionT:
        """Validate the model's arguments into this tool's Action (the response schema's
        fields, if the tool has one, into its `structured_output`).

        Raises ToolArgumentError with a message the model can act on.
        """
        output: dict[str, Any] | None = None
        if self.response_schema is not None:
            try:
                arguments, output = split_arguments(self.response_schema, arguments)
            except ResponseSchemaError as exc:
                raise ToolArgumentError(f"Invalid arguments for tool '{self.name}': {exc}") from exc
        try:
            action = self.action_type.model_validate(arguments)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or '(arguments)'}: {err['msg']}"
                for err in exc.errors()
            )
            raise ToolArgumentError(
                f"Invalid arguments for tool '{self.name}': {problems}. "
                f"Expected parameters: {sorted(self.action_type.model_fields)}."
            ) from exc
        if output is not None:
            action.set_structured_output(output)
        return action

    def __call__(
        self, action: ActionT, conversation: LocalConversation | None = None
    ) -> Observation:
        """Run the action through the executor. An Observation comes back as it is; a dict
        or another model becomes the declared observation type (or the one its `kind` names).
        """
        if self.executor is None:
            raise NotImplementedError(f"Tool '{self.name}' has no executor")
        result: object = self.executor(action, conversation)
        if isinstance(result, Observation):
            return result
        if isinstance(result, BaseModel):
            result = result.model_dump()
        if isinstance(result, dict):
            return (self.observation_type or Observation).model_validate(result)
        raise TypeError(
            f"Output must be dict or BaseModel: the executor of tool '{self.name}' returned "
            f"{type(result).__name__}; return an Observation"
        )

    def to_mcp_tool(self) -> dict[str, Any]:
        """This tool as an MCP tool: name, description, input (and output) schema."""
        tool: dict[str, Any] = {
            "name": self.name,
            "description": self.description,
            "inputSchema": self.action_type.to_mcp_schema(),
        }
        if self.annotations is not None:
            tool["annotations"] = self.annotations
        if self.meta is not None:
            tool["_meta"] = self.meta
        if self.observation_type is not None:
            tool["outputSchema"] = self.observation_type.to_mcp_schema()
        return tool

    def to_openai_tool(self, add_security_risk_prediction: bool = False) -> dict[str, Any]:
        """The chat-completions `tools` entry for this tool.

        With `add_security_risk_prediction`, tools that are not read-only get a required
        `security_risk` parameter so the model rates each call.
        """
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self._get_tool_schema(add_security_risk_prediction),
            },
        }

    def to_responses_tool(self, add_security_risk_prediction: bool = False) -> dict[str, Any]:
        """The Responses API `tools` entry for this tool (see `to_openai_tool`)."""
        return {
            "type": "function",
            "name": self.name,
            "description": self.description,
            "parameters": self._get_tool_schema(add_security_risk_prediction),
            "strict": False,
        }

    def _get_tool_schema(self, add_security_risk_prediction: bool = False) -> dict[str, Any]:
        """The action's schema plus the arguments every call may carry: its risk and summary."""
        schema = self.action_type.to_mcp_schema()
        extra: dict[str, Any] = {}
        if add_security_risk_prediction and not self.is_read_only:
            extra["security_risk"] = {
                "type": "string",
                "enum": ["LOW", "MEDIUM", "HIGH"],
                "description": SECURITY_RISK_DESC,
            }
            schema["required"] = [*schema.get("required", []), "security_risk"]
        own = schema["properties"]
        if self.response_schema is not None:
            added = parameters_of(self.response_schema)
            own.update(added["properties"])
            required = schema.setdefault("required", [])
            required += [name for name in added["required"] if name not in required]
        if "summary" not in own:  # a tool's own `summary` parameter wins
            extra["summary"] = {"type": "string", "description": SUMMARY_DESC}
        # The short arguments first: a reply cut off at the output-token limit then loses
        # the long content arguments, not the rating.
        schema["properties"] = {**extra, **{k: v for k, v in own.items() if k not in extra}}
        return schema

    def close(self) -> None:
        """Close the executor, if any."""
        if self.executor is not None:
            self.executor.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"
