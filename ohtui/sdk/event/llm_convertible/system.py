"""SystemPromptEvent: the system prompt and the tools offered to the model."""

from __future__ import annotations

from typing import Any

from pydantic import Field
from rich.text import Text

from ohtui.sdk.event.base import LLMConvertibleEvent
from ohtui.sdk.event.types import SourceType
from ohtui.sdk.llm.message import Message, TextContent


class SystemPromptEvent(LLMConvertibleEvent):
    """The system prompt, and the tool schemas in chat-completions form."""

    source: SourceType = "agent"
    system_prompt: TextContent
    tools: list[dict[str, Any]] = Field(
        default_factory=list, description="The tools, as the `tools` entries sent to the model."
    )
    dynamic_context: TextContent | None = Field(
        default=None,
        description="Per-conversation context sent after the prompt, in the same message.",
    )

    @property
    def tool_names(self) -> list[str]:
        """The names of the tools offered."""
        return [t.get("function", {}).get("name", "?") for t in self.tools]

    @property
    def visualize(self) -> Text:
        """The prompt's first lines and the tool names."""
        text = Text("System prompt", style="bold")
        text.append(f" ({len(self.system_prompt.text)} chars)\n", style="dim")
        text.append("Tools: ", style="bold")
        text.append(", ".join(self.tool_names))
        if self.dynamic_context is not None:
            text.append("\nContext: ", style="bold")
            text.append(self.dynamic_context.text)
        return text

    def to_llm_message(self) -> Message:
        """The system message: the prompt, then the dynamic context as a second block."""
        blocks = [self.system_prompt]
        if self.dynamic_context is not None:
            blocks.append(self.dynamic_context)
        return Message(role="system", content=blocks)
