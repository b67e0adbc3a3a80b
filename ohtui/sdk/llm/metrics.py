"""Token, cost and latency accounting per LLM (per usage_id)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator


class TokenUsage(BaseModel):
    """Token counts of one call, or accumulated over many."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    model: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    context_window: int = 0
    per_turn_token: int = Field(default=0, description="prompt + completion of the last call.")
    response_id: str = ""

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(
            model=self.model or other.model,
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
            context_window=max(self.context_window, other.context_window),
            per_turn_token=other.per_turn_token,
            response_id=other.response_id,
        )

    @property
    def cache_hit_rate(self) -> float | None:
        """The share of input tokens read from the provider's cache (None without input).

        Most providers count cached reads inside `prompt_tokens`; some count them apart,
        so a cache count above the prompt count is taken as the rest of the input.
        """
        cached = self.cache_read_tokens
        total = self.prompt_tokens + cached if cached > self.prompt_tokens else self.prompt_tokens
        return cached / total if total > 0 else None


class MetricsSnapshot(BaseModel):
    """The totals of a Metrics at one moment (or of one call)."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    model_name: str = ""
    accumulated_cost: float = 0.0
    accumulated_token_usage: TokenUsage = Field(default_factory=TokenUsage)
    max_budget_per_task: float | None = None

    @field_validator("accumulated_token_usage", mode="before")
    @classmethod
    def _none_is_zero(cls, value: Any) -> Any:
        return TokenUsage() if value is None else value

    @property
    def cache_hit_rate(self) -> float | None:
        """The share of all input tokens read from the provider's cache (None without input)."""
        return self.accumulated_token_usage.cache_hit_rate


RECENT_USAGES = 1000
"""How many calls' token usages a Metrics keeps in `token_usages` (the newest)."""


class Metrics(MetricsSnapshot):
    """Accumulated cost, tokens and latency of one LLM.

    What is saved are running totals (not per-call lists), so that saving it stays O(1)
    however long the conversation gets. The usages of the latest calls are kept in memory
    too (`token_usages`), to find one call's figures by its response id.
    """

    latest_token_usage: TokenUsage | None = Field(
        default=None, description="The last call's usage: its prompt size is the context used."
    )
    token_usages: list[TokenUsage] = Field(
        default_factory=list,
        exclude=True,
        description=f"The usage of each of the latest {RECENT_USAGES} calls made in this "
        "process, oldest first (merged Metrics: each one's in turn). Not saved: a resumed "
        "conversation's list starts empty, its totals carry on.",
    )
    call_count: int = 0
    total_latency: float = 0.0
    max_latency: float = 0.0

    def add_cost(self, value: float) -> None:
        """Add the cost of a call, in USD."""
        if value < 0:
            raise ValueError("cost cannot be negative")
        self.accumulated_cost += value

    def add_token_usage(
        self,
        prompt_tokens: int,
        completion_tokens: int,
        cache_read_tokens: int = 0,
        cache_write_tokens: int = 0,
        context_window: int = 0,
        response_id: str = "",
        reasoning_tokens: int = 0,
    ) -> TokenUsage:
        """Add one call's token counts; returns that call's usage."""
        usage = TokenUsage(
            model=self.model_name,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            cache_read_tokens=cache_read_tokens,
            cache_write_tokens=cache_write_tokens,
            reasoning_tokens=reasoning_tokens,
            context_window=context_window,
            per_turn_token=prompt_tokens + completion_tokens,
            response_id=response_id,
        )
        self.accumulated_token_usage = self.accumulated_token_usage + usage
        self.latest_token_usage = usage
        self._keep_usages([usage])
        return usage

    def find_token_usage(self, response_id: str) -> TokenUsage | None:
        """The usage of the call that answered with `response_id`, if it is among the calls
        kept (the newest first); None for an empty id."""
        if not response_id:
            return None
        return next((u for u in reversed(self.token_usages) if u.response_id == response_id), None)

    def _keep_usages(self, usages: list[TokenUsage]) -> None:
        self.token_usages.extend(usages)
        extra = len(self.token_usages) - RECENT_USAGES
        if extra > 0:
            del self.token_usages[:extra]

    def add_response_latency(self, seconds: float, response_id: str = "") -> None:
        """Record how long one call took (`response_id` is accepted as the SDK passes it;
        only the totals are kept)."""
        self.call_count += 1
        self.total_latency += seconds
        self.max_latency = max(self.max_latency, seconds)

    @property
    def average_latency(self) -> float:
        """Mean seconds per call (0 before the first call)."""
        return self.total_latency / self.call_count if self.call_count else 0.0

    def merge(self, other: Metrics) -> None:
        """Add another Metrics' totals into this one."""
        self.accumulated_cost += other.accumulated_cost
        self.accumulated_token_usage = self.accumulated_token_usage + other.accumulated_token_usage
        self.latest_token_usage = other.latest_token_usage or self.latest_token_usage
        self._keep_usages(other.token_usages)
        self.call_count += other.call_count
        self.total_latency += other.total_latency
        self.max_latency = max(self.max_latency, other.max_latency)

    def get_snapshot(self) -> MetricsSnapshot:
        """A copy of the current totals."""
        return MetricsSnapshot(
            model_name=self.model_name,
            accumulated_cost=self.accumulated_cost,
            accumulated_token_usage=self.accumulated_token_usage.model_copy(),
            max_budget_per_task=self.max_budget_per_task,
        )
