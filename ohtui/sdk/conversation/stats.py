"""ConversationStats: the metrics of every LLM a conversation used, by usage_id."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from ohtui.sdk.agent.conversation_contract import ContextUsage
from ohtui.sdk.llm.metrics import Metrics

if TYPE_CHECKING:
    from ohtui.sdk.llm.registry import RegistryEvent


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
