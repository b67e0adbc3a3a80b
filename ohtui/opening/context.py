"""The agent's context strategy, built from `[context]` in config.toml.

One of: nothing (the whole history goes to the model), an LLMSummarizingCondenser (the
OpenHands pattern: events are condensed into a summary, recorded in the log), or a Strands
conversation manager (a sliding window, or summarizing messages; the log is never changed).
Imported with the engine, when a conversation opens.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ohtui.settings.choices import ContextStrategy

if TYPE_CHECKING:
    from ohtui.sdk import LLM
    from ohtui.settings.schema import ContextSettings

CONDENSER_USAGE_ID = "condenser"
"""The summarizing condenser's LLM, in the conversation's stats."""
HOW_TO_CONDENSE = (
    'set strategy = "summarizing_condenser" in the [context] table of config.toml, or choose '
    "Context: summarizing condenser in /settings"
)
"""How to turn on the strategy that /condense needs."""


def agent_context_options(settings: ContextSettings, llm: LLM) -> dict[str, Any]:
    """The Agent keyword arguments (`condenser=` or `conversation_manager=`) for `settings`,
    with `llm` the agent's LLM (its copy writes the summaries)."""
    from ohtui.sdk import (
        LLMSummarizingCondenser,
        SlidingWindowConversationManager,
        SummarizingConversationManager,
    )
    from ohtui.sdk.context.conversation_manager import ProactiveCompressionConfig

    strategy = settings.strategy
    proactive = (
        ProactiveCompressionConfig(compression_threshold=settings.threshold)
        if settings.threshold is not None
        else None
    )
    if strategy is ContextStrategy.SUMMARIZING_CONDENSER:
        max_tokens = None
        if settings.threshold is not None:
            # The window from litellm's map imports litellm: only when a threshold needs it.
            window = llm.context_window
            max_tokens = int(window * settings.threshold) if window else None
        summarizer = llm.model_copy(update={"usage_id": CONDENSER_USAGE_ID, "stream": False})
        condenser = LLMSummarizingCondenser(
            llm=summarizer,
            max_size=settings.max_size,
            keep_first=settings.keep_first,
            max_tokens=max_tokens or None,
        )
        return {"condenser": condenser}
    if strategy is ContextStrategy.SLIDING_WINDOW:
        return {
            "conversation_manager": SlidingWindowConversationManager(
                window_size=settings.window_size, proactive_compression=proactive
            )
        }
    if strategy is ContextStrategy.SUMMARIZING_MANAGER:
        return {
            "conversation_manager": SummarizingConversationManager(
                summary_ratio=settings.summary_ratio,
                preserve_recent_messages=settings.preserve_recent_messages,
                proactive_compression=proactive,
            )
        }
    return {}
