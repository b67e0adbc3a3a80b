"""What the agent and the conversation share: the run's status, the context meter, senders.

The conversation (above the agent) drives the agent; the agent reports back through the
conversation's state: it sets `execution_status`, fills `stats.context` (the
`ConversationStats` the wire codec also decodes) and writes messages whose sender the stuck
detector knows. These types live here, with the agent, so that the
agent needs nothing from `ohtui.sdk.conversation` at run time; the conversation re-exports
them where the SDK names them (`conversation.state`, `conversation.stats`).
"""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from ohtui.sdk.llm.metrics import Metrics

if TYPE_CHECKING:
    from ohtui.sdk.llm.registry import RegistryEvent

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


class ConversationStats(BaseModel):
    """Cost, tokens and latency per LLM usage_id, saved with the conversation.

    `context` is how full the agent model's context is after its latest call (None before
    the first): read `state.stats.context.tokens` and `.window` for a context meter.
    """

    model_config = ConfigDict(defer_build=True, extra="forbid")

    usage_to_metrics: dict[str, Metrics] = Field(default_factory=dict)
    context: ContextUsage | None = Field(
        default=None, description="Tokens in context and the window, after the latest call."
    )

    def register_llm(self, event: RegistryEvent) -> None:
        """Track the LLM a registry added; a resumed conversation keeps accumulating into its
        saved metrics."""
        llm = event.llm
        saved = self.usage_to_metrics.get(llm.usage_id)
        if saved is not None:
            llm.restore_metrics(saved)
        else:
            self.usage_to_metrics[llm.usage_id] = llm.metrics

    def get_metrics_for_usage(self, usage_id: str) -> Metrics:
        """The metrics of one LLM (KeyError if it never ran here)."""
        try:
            return self.usage_to_metrics[usage_id]
        except KeyError:
            known = ", ".join(sorted(self.usage_to_metrics)) or "none yet"
            raise KeyError(
                f"LLM usage does not exist: '{usage_id}' (usage ids here: {known})"
            ) from None

    def get_combined_metrics(self) -> Metrics:
        """All LLMs' metrics added together."""
        total = Metrics(model_name="combined")
        for metrics in self.usage_to_metrics.values():
            total.merge(metrics)
        return total
