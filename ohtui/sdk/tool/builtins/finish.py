"""The `finish` tool: the agent declares the task done and says what it did."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Self

from pydantic import Field

from ohtui.sdk.tool.schema import Action, Observation
from ohtui.sdk.tool.tool import ToolAnnotations, ToolDefinition, ToolExecutor

if TYPE_CHECKING:
    from rich.text import Text

    from ohtui.sdk.conversation.state import ConversationState

FINISH_DESCRIPTION = """Signals that the task is done, or that you cannot go on without the user.
Use it once the work is done and checked. `message` is shown to the user as your final
answer: summarise what you did and anything they must know or do next."""


class FinishAction(Action):
    """End the run with a final message to the user."""

    message: str = Field(description="Your final message to the user.")

    @property
    def visualize(self) -> Text:
        """The final message."""
        from rich.text import Text

        return Text(self.message)


class FinishObservation(Observation):
    """Acknowledges `finish`; nothing more happens until the user writes again."""


class FinishExecutor(ToolExecutor[FinishAction, FinishObservation]):
    """Echoes the final message back; the conversation ends the run on `finish`."""

    def __call__(self, action: FinishAction, conversation: object = None) -> FinishObservation:
        return FinishObservation.from_text(action.message)


class FinishTool(ToolDefinition[FinishAction, FinishObservation]):
    """The built-in `finish` tool; `FinishTool()` is ready to use."""

    def __init__(self, **fields: Any) -> None:
        defaults: dict[str, Any] = {
            "description": FINISH_DESCRIPTION,
            "action_type": FinishAction,
            "observation_type": FinishObservation,
            "annotations": ToolAnnotations(
                title="finish",
                readOnlyHint=True,
                destructiveHint=False,
                idempotentHint=True,
                openWorldHint=False,
            ),
            "executor": FinishExecutor(),
        }
        super().__init__(**{**defaults, **fields})

    @classmethod
    def create(cls, conv_state: ConversationState | None = None, **params: Any) -> Sequence[Self]:
        """The `finish` tool; it needs no conversation and takes no parameters."""
        if params:
            raise ValueError(f"finish takes no parameters, got {sorted(params)}")
        return [cls()]
