"""Responses to tool calls: results, rejections and agent errors."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field, SerializeAsAny

from ohtui.sdk.event.base import LLMConvertibleEvent
from ohtui.sdk.event.base.types import EventID, SourceType, ToolCallID
from ohtui.sdk.llm.message import Message, TextContent
from ohtui.sdk.tool.schema import Observation

if TYPE_CHECKING:
    from rich.text import Text


class ObservationBaseEvent(LLMConvertibleEvent):
    """Anything that answers a tool call: a result, a rejection or an error."""

    source: SourceType = "environment"
    tool_name: str
    tool_call_id: ToolCallID

    def _tool_message(self, content: list[TextContent]) -> Message:
        return Message(
            role="tool", content=content, tool_call_id=self.tool_call_id, name=self.tool_name
        )


class ObservationEvent(ObservationBaseEvent):
    """The result of executing an action."""

    observation: SerializeAsAny[Observation]
    action_id: EventID = Field(description="The ActionEvent this answers.")

    @property
    def visualize(self) -> Text:
        """The tool name and its output."""
        from rich.text import Text

        text = Text("Tool: ", style="bold")
        text.append(self.tool_name, style="bold cyan")
        text.append("\nResult:\n", style="bold")
        text.append_text(self.observation.visualize)
        return text

    def to_llm_message(self) -> Message:
        """The observation's content as a tool message."""
        return Message(
            role="tool",
            content=list(self.observation.to_llm_content),
            tool_call_id=self.tool_call_id,
            name=self.tool_name,
        )


class UserRejectObservation(ObservationBaseEvent):
    """The user (or a rule or hook) rejected the action; it did not run."""

    action_id: EventID
    rejection_reason: str = "User rejected the action."
    rejection_source: Literal["user", "hook"] = Field(
        default="user", description="Who rejected it: the user (or their rules), or a hook."
    )

    @property
    def visualize(self) -> Text:
        """A one-line rejection notice with its reason."""
        from rich.text import Text

        return Text(f"✗ {self.tool_name} rejected: {self.rejection_reason}", style="yellow")

    def to_llm_message(self) -> Message:
        """The rejection and its reason, as the tool result."""
        return self._tool_message(
            [TextContent(text=f"Action rejected: {self.rejection_reason}\nThe action did not run.")]
        )


class AgentErrorEvent(ObservationBaseEvent):
    """An error from the agent's scaffold for one tool call (bad tool, bad arguments...).

    Sent to the model as the tool result so it can correct itself; the run continues.
    """

    source: SourceType = "agent"
    error: str

    @property
    def visualize(self) -> Text:
        """The error in red, then the tool it came from."""
        from rich.text import Text

        text = Text(f"Error Details: {self.error}", style="bold red")
        text.append(f"\nTool: {self.tool_name}", style="red")
        return text

    def to_llm_message(self) -> Message:
        """The error text as the tool result."""
        return self._tool_message([TextContent(text=self.error)])
