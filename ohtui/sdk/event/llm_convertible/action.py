"""ActionEvent: one tool call the agent made."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pydantic import Field, SerializeAsAny

from ohtui.sdk.event.base import LLMConvertibleEvent
from ohtui.sdk.event.base.types import SourceType, ToolCallID
from ohtui.sdk.llm.message import (
    Message,
    MessageToolCall,
    ReasoningItemModel,
    RedactedThinkingBlock,
    TextContent,
    ThinkingBlock,
    text_of,
)
from ohtui.sdk.tool.risk import SecurityRisk
from ohtui.sdk.tool.schema import Action

if TYPE_CHECKING:
    from rich.text import Text


class ActionEvent(LLMConvertibleEvent):
    """A tool call from the model, with its validated action (None if it did not validate)."""

    source: SourceType = "agent"
    thought: Sequence[TextContent] = Field(
        default_factory=list, description="Text the model wrote with the call (first of a batch)."
    )
    reasoning_content: str | None = None
    thinking_blocks: list[ThinkingBlock | RedactedThinkingBlock] = Field(default_factory=list)
    responses_reasoning_item: ReasoningItemModel | None = None
    action: SerializeAsAny[Action] | None = Field(
        default=None, description="The validated action; None when the arguments were invalid."
    )
    tool_name: str
    tool_call_id: ToolCallID
    tool_call: MessageToolCall
    llm_response_id: str = Field(description="Groups the tool calls of one LLM response.")
    security_risk: SecurityRisk = SecurityRisk.UNKNOWN
    security_risk_reason: str | None = Field(
        default=None, description="Which analyzer (and rule) gave the risk, and why."
    )
    summary: str | None = Field(
        default=None, description="The model's few words on what this call does, if it gave any."
    )

    @property
    def visualize(self) -> Text:
        """The thought, then the tool and its arguments."""
        from rich.text import Text

        text = Text()
        thought = text_of(self.thought)
        item = self.responses_reasoning_item
        for reasoning in (self.reasoning_content, item.text if item else ""):
            if reasoning:
                text.append(f"Reasoning: {reasoning}\n", style="dim")
        if thought:
            text.append("Thought: ", style="bold")
            text.append(f"{thought}\n", style="italic")
        text.append(f"{self.tool_name}", style="bold magenta")
        if self.security_risk is not SecurityRisk.UNKNOWN:
            text.append(" ")
            text.append_text(self.security_risk.visualize)
        text.append("\n")
        if self.summary:
            text.append("Summary: ", style="bold")
            text.append(f"{self.summary}\n")
        if self.action is not None:
            text.append_text(self.action.visualize)
        else:
            text.append(self.tool_call.arguments, style="dim")
        return text

    def to_llm_message(self) -> Message:
        """This call alone; `events_to_messages` merges the calls of one response."""
        return action_batch_to_message([self])

    def llm_batch_id(self) -> str:
        """The response this call came from: its calls are one assistant message."""
        return self.llm_response_id

    def batch_to_llm_message(self, batch: list[LLMConvertibleEvent]) -> Message:
        """One assistant message carrying every tool call of the response."""
        return action_batch_to_message([e for e in batch if isinstance(e, ActionEvent)])


def action_batch_to_message(batch: list[ActionEvent]) -> Message:
    """One assistant message carrying every tool call of a batch."""
    first = batch[0]
    for later in batch[1:]:
        if later.thought:
            # The wording's start is the SDK's, which callers may match on.
            raise AssertionError(
                "Expected empty thought for multi-action events after the first one: "
                f"action {later.tool_call_id} of response {later.llm_response_id} has one, "
                "but only the first call of a response carries its text"
            )
    return Message(
        role="assistant",
        content=list(first.thought),
        tool_calls=[a.tool_call for a in batch],
        reasoning_content=first.reasoning_content,
        thinking_blocks=list(first.thinking_blocks),
        responses_reasoning_item=first.responses_reasoning_item,
    )
