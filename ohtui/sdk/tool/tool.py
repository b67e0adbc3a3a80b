"""ToolDefinition and ToolExecutor: what the model may call, and the code that runs it."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Generic, Self, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from ohtui.sdk.tool.schema import Action, Observation

if TYPE_CHECKING:
    from ohtui.sdk.conversation.impl.local_conversation import LocalConversation
    from ohtui.sdk.conversation.state import ConversationState

ActionT = TypeVar("ActionT", bound=Action)
ObservationT = TypeVar("ObservationT", bound=Observation)

SECURITY_RISK_DESC = (
    "Your own rating of this action's risk: LOW (read-only or easily undone), MEDIUM "
    "(changes files in the workspace), HIGH (destructive, irreversible, or touching the "
    "system, credentials or the network)."
)


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

    def close(self) -> None:
        """Release resources (processes, files). Must be idempotent."""


class ToolArgumentError(ValueError):
    """The model's arguments for a tool did not match its schema."""


class ToolDefinition(Generic[ActionT, ObservationT]):
    """A tool the agent can call: its name, description, argument schema and executor."""

    def __init__(
        self,
        *,
        name: str,
        description: str,
        action_type: type[ActionT],
        observation_type: type[ObservationT] | None = None,
        annotations: ToolAnnotations | None = None,
        executor: ToolExecutor[ActionT, ObservationT] | None = None,
        meta: dict[str, Any] | None = None,
    ) -> None:
        self.name = name
        self.description = description
        self.action_type = action_type
        self.observation_type = observation_type
        self.annotations = annotations
        self.executor = executor
        self.meta = meta or {}

    @classmethod
    def create(cls, conv_state: ConversationState, **params: Any) -> Sequence[Self]:
        """Build the tool(s) for one conversation. Tools with executors override this."""
        raise NotImplementedError(f"{cls.__name__} does not implement create()")

    @property
    def is_read_only(self) -> bool:
        """Whether the tool declares that it changes nothing."""
        return bool(self.annotations and self.annotations.readOnlyHint)

    def action_from_arguments(self, arguments: dict[str, Any]) -> ActionT:
        """Validate the model's arguments into this tool's Action.

        Raises ToolArgumentError with a message the model can act on.
        """
        try:
            return self.action_type.model_validate(arguments)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or '(arguments)'}: {err['msg']}"
                for err in exc.errors()
            )
            raise ToolArgumentError(
                f"Invalid arguments for tool '{self.name}': {problems}. "
                f"Expected parameters: {sorted(self.action_type.model_fields)}."
            ) from exc

    def __call__(
        self, action: ActionT, conversation: LocalConversation | None = None
    ) -> Observation:
        """Run the action through this tool's executor."""
        if self.executor is None:
            raise NotImplementedError(f"tool '{self.name}' has no executor")
        return self.executor(action, conversation)

    def to_openai_tool(self, add_security_risk_prediction: bool = False) -> dict[str, Any]:
        """The chat-completions `tools` entry for this tool.

        With `add_security_risk_prediction`, tools that are not read-only get a required
        `security_risk` parameter so the model rates each call.
        """
        parameters = self.action_type.to_json_schema()
        if add_security_risk_prediction and not self.is_read_only:
            parameters["properties"]["security_risk"] = {
                "type": "string",
                "enum": ["LOW", "MEDIUM", "HIGH"],
                "description": SECURITY_RISK_DESC,
            }
            parameters["required"] = [*parameters.get("required", []), "security_risk"]
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": parameters,
            },
        }

    def close(self) -> None:
        """Close the executor, if any."""
        if self.executor is not None:
            self.executor.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"
