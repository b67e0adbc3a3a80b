"""AgentContext: instructions an agent adds to its system prompt and to each user message."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from ohtui.sdk.llm.message import TextContent


class AgentContext(BaseModel):
    """Text the agent adds for the model: after its system prompt, after each user message."""

    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")

    system_message_suffix: str | None = Field(
        default=None, description="Appended to the system prompt."
    )
    user_message_suffix: str | None = Field(
        default=None,
        description="Appended (for the model) to every user message sent to the conversation.",
    )

    def user_message_extension(self) -> list[TextContent]:
        """What to add to a user message: the suffix, if there is one."""
        suffix = (self.user_message_suffix or "").strip()
        return [TextContent(text=suffix)] if suffix else []
