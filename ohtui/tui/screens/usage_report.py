"""What `/cost` shows: tokens, cache use and cost per model and for the whole conversation,
and how full the context is, read from the conversation's stats (here or from its server)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ohtui.sdk.conversation.stats import ConversationStats
    from ohtui.sdk.llm.metrics import Metrics


@dataclass(frozen=True)
class UsageRow:
    """The calls made with one model (or all of them), added up."""

    model: str
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost: float = 0.0

    def __add__(self, other: UsageRow) -> UsageRow:
        return UsageRow(
            self.model,
            self.calls + other.calls,
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
            self.cost + other.cost,
        )

    @property
    def cache_hit_rate(self) -> float | None:
        """The share of input read from the provider's cache (None without input). Most
        providers count cache reads inside the input; a count above it is the rest of it."""
        read, given = self.cache_read_tokens, self.input_tokens
        total = given + read if read > given else given
        return read / total if total else None


@dataclass(frozen=True)
class UsageReport:
    """Per model (in the order they were first used), the whole conversation, the context."""

    rows: tuple[UsageRow, ...]
    total: UsageRow
    context_tokens: int | None
    """Tokens in context after the latest call (None: no call yet)."""
    context_window: int | None
    """The window of the model those tokens were counted for (None: unknown)."""
    context_model: str
    current_model: str
    """The model the next turn thinks with."""


def _row(model: str, metrics: Metrics) -> UsageRow:
    usage = metrics.accumulated_token_usage
    return UsageRow(
        model,
        metrics.call_count,
        usage.prompt_tokens,
        usage.completion_tokens,
        usage.cache_read_tokens,
        usage.cache_write_tokens,
        metrics.accumulated_cost,
    )


def usage_report(stats: ConversationStats, current_model: str) -> UsageReport:
    """The report of `stats`: one row per model, whatever it was used for (the agent, the
    summaries, the titles), since the price and the cache are the model's."""
    by_model: dict[str, UsageRow] = {}
    for usage_id, metrics in stats.usage_to_metrics.items():
        model = metrics.model_name or usage_id
        row = _row(model, metrics)
        by_model[model] = by_model[model] + row if model in by_model else row
    rows = tuple(row for row in by_model.values() if row.calls or row.cost or row.input_tokens)
    total = sum(rows, UsageRow("conversation"))
    context = stats.context
    return UsageReport(
        rows=rows,
        total=total,
        context_tokens=context.tokens if context is not None else None,
        context_window=context.window if context is not None else None,
        context_model=context.model if context is not None else "",
        current_model=current_model,
    )
