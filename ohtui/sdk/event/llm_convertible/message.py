"""MessageEvent: a user or agent message."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pydantic import Field

from ohtui.sdk.event.base import LLMConvertibleEvent
from ohtui.sdk.llm.message import (
    Message,
    RedactedThinkingBlock,
    TextContent,
    ThinkingBlock,
    content_to_str,
    text_of,
)

if TYPE_CHECKING:
    from rich.text import Text


class MessageEvent(LLMConvertibleEvent):
    """A message from the user or from the agent (text, not a tool call)."""

    llm_message: Message = Field(description="The message as exchanged with the model.")
    llm_response_id: str | None = Field(default=None, description="The LLM response it came from.")
    activated_skills: list[str] = Field(default_factory=list)
    extended_content: list[TextContent] = Field(
        default_factory=list, description="Extra context appended for the model only."
    )
    sender: str | None = Field(default=None, description="Who sent it, in multi-agent setups.")

    @classmethod
    def from_environment(cls, text: str, sender: str) -> MessageEvent:
        """A message the engine itself tells the agent (seen by the model as a user message)."""
        return cls(
            source="environment",
            sender=sender,
            llm_message=Message(role="user", content=[TextContent(text=text)]),
        )

    @property
    def reasoning_content(self) -> str:
        """The model's reasoning behind this message, if it exposed any."""
        return self.llm_message.reasoning_content or ""

    @property
    def thinking_blocks(self) -> Sequence[ThinkingBlock | RedactedThinkingBlock]:
        """Anthropic thinking blocks from the message."""
        return self.llm_message.thinking_blocks

    @property
    def text(self) -> str:
        """The message's text."""
        return self.llm_message.text

    @property
    def visualize(self) -> Text:
        """The message text, with its reasoning dimmed above it."""
        from rich.text import Text

        text = Text()
        item = self.llm_message.responses_reasoning_item
        for reasoning in (self.reasoning_content, item.text if item else ""):
            if reasoning:
                text.append(f"Reasoning: {reasoning}\n", style="dim")
        content = self.llm_message.content
        for index, (piece, part) in enumerate(zip(content, content_to_str(content), strict=True)):
            if isinstance(piece, TextContent):
                text.append(part)  # text parts join as in the message's text
            else:
                text.append((" " if index else "") + part, style="dim")
        if self.activated_skills:
            text.append(f"\nActivated Skills: {', '.join(self.activated_skills)}", style="dim")
        if self.extended_content:
            text.append("\nPrompt Extension based on Agent Context: ", style="dim bold")
            text.append(text_of(self.extended_content), style="dim")
        return text

    def to_llm_message(self) -> Message:
        """The message, with any extended content appended."""
        if not self.extended_content:
            return self.llm_message
        return self.llm_message.model_copy(
            update={"content": [*self.llm_message.content, *self.extended_content]}
        )
