"""What the agent and the conversation share: the run's status, the context meter, senders.

The conversation (above the agent) drives the agent; the agent reports back through the
conversation's state: it sets `execution_status`, fills `stats.context` and writes messages
whose sender the stuck detector knows. These types live here, with the agent, so that the
agent needs nothing from `ohtui.sdk.conversation` at run time; the conversation re-exports
them where the SDK names them (`conversation.state`, `conversation.stats`).
"""

from __future__ import annotations

from enum import Enum

from pydantic import BaseModel, ConfigDict, Field

EMPTY_REPLY_SENDER = "empty-reply"
"""The sender of the engine's message after an empty model reply (the stuck detector's)."""


class ConversationExecutionStatus(str, Enum):
    """Where a conversation's run stands."""

    IDLE = "idle"
    RUNNING = "running"
    PAUSED = "paused"
    WAITING_FOR_CONFIRMATION = "waiting_for_confirmation"
    FINISHED = "finished"
    ERROR = "error"
    STUCK = "stuck"
    DELETING = "deleting"

    def is_terminal(self) -> bool:
        """FINISHED, ERROR and STUCK end a run; IDLE (never run) does not."""
        return self in (
            ConversationExecutionStatus.FINISHED,
            ConversationExecutionStatus.ERROR,
            ConversationExecutionStatus.STUCK,
        )


class ContextUsage(BaseModel):
    """How full the agent model's context is after its latest call."""

    model_config = ConfigDict(defer_build=True, extra="forbid", frozen=True)

    tokens: int = Field(
        description="Tokens in context: the last request's input plus its answer (what the "
        "next request starts from), as the provider reported them or counted offline. Not "
        "cumulative usage."
    )
    window: int | None = Field(
        default=None,
        description="The model's context window in tokens (LLM.max_input_tokens, else "
        "litellm's model map); None when unknown.",
    )
    model: str = Field(default="", description="The model the tokens were counted for.")

    @property
    def fraction(self) -> float | None:
        """tokens / window, or None without a known window."""
        return self.tokens / self.window if self.window else None
