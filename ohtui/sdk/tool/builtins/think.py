"""The `think` tool: a place to reason step by step without acting."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Self

from pydantic import Field

from ohtui.sdk.tool.schema import Action, Observation
from ohtui.sdk.tool.tool import ToolAnnotations, ToolDefinition, ToolExecutor

if TYPE_CHECKING:
    from rich.text import Text

    from ohtui.sdk.conversation.state import ConversationState

THINK_DESCRIPTION = """Think without acting or changing anything: plan, weigh options, or make
sense of an error before the next step. The thought is logged and nothing else happens."""


class ThinkAction(Action):
    """A thought to log."""

    thought: str = Field(description="The thought to log.")

    @property
    def visualize(self) -> Text:
        """The thought, dimmed."""
        from rich.text import Text

        return Text(self.thought, style="dim italic")


class ThinkObservation(Observation):
    """Acknowledges a logged thought."""


class ThinkExecutor(ToolExecutor[ThinkAction, ThinkObservation]):
    """Logs the thought; nothing else happens."""

    def __call__(self, action: ThinkAction, conversation: object = None) -> ThinkObservation:
        return ThinkObservation.from_text("Your thought has been logged.")


class ThinkTool(ToolDefinition[ThinkAction, ThinkObservation]):
    """The built-in `think` tool; `ThinkTool()` is ready to use."""

    def __init__(self, **fields: Any) -> None:
        defaults: dict[str, Any] = {
            "description": THINK_DESCRIPTION,
            "action_type": ThinkAction,
            "observation_type": ThinkObservation,
            "annotations": ToolAnnotations(
                title="think",
                readOnlyHint=True,
                destructiveHint=False,
                idempotentHint=True,
                openWorldHint=False,
            ),
            "executor": ThinkExecutor(),
        }
        super().__init__(**{**defaults, **fields})

    @classmethod
    def create(cls, conv_state: ConversationState | None = None, **params: Any) -> Sequence[Self]:
        """The `think` tool; it needs no conversation and takes no parameters."""
        if params:
            raise ValueError(f"think takes no parameters, got {sorted(params)}")
        return [cls()]
