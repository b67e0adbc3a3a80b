"""LLMSummarizingCondenser: forgets the middle of the history, an LLM summary in its place."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from enum import Enum

from pydantic import Field, PrivateAttr, model_validator

from ohtui.sdk.context.condenser.base import (
    CondensationRequirement,
    NoCondensationAvailableException,
    RollingCondenser,
)
from ohtui.sdk.context.condenser.summary_prompt import summary_prompt
from ohtui.sdk.context.condenser.utils import (
    event_text,
    get_suffix_length_for_token_reduction,
    get_total_token_count,
    token_upper_bound,
)
from ohtui.sdk.context.view import View, event_ids
from ohtui.sdk.event.base import LLMConvertibleEvent
from ohtui.sdk.event.condenser import Condensation
from ohtui.sdk.llm.exceptions import LLMCancelledError
from ohtui.sdk.llm.llm import LLM
from ohtui.sdk.llm.message import Message, TextContent

logger = logging.getLogger(__name__)


class Reason(Enum):
    """Why a view is condensed."""

    REQUEST = "request"
    TOKENS = "tokens"
    EVENTS = "events"


class LLMSummarizingCondenser(RollingCondenser):
    """Keeps the first `keep_first` events and the newest ones; the events between are
    forgotten and `llm` writes the summary that replaces them.

    It condenses when asked (`conversation.condense()`, a context-window error), when the
    view holds more than `max_size` events, or more than `max_tokens` tokens (or the
    agent model's window, whichever is smaller). It then keeps about half: `max_size // 2`
    events, or half the token limit. The system prompt and the first user message are
    never forgotten, and a tool call is never separated from its result.
    """

    llm: LLM = Field(description="Writes the summaries (may differ from the agent's).")
    max_size: int = Field(default=240, gt=0, description="Most events in the view.")
    max_tokens: int | None = Field(
        default=None, gt=0, description="Most tokens in the view (None: the agent's window)."
    )
    keep_first: int = Field(
        default=2, ge=0, description="Leading events never forgotten (system prompt, task)."
    )
    minimum_progress: float = Field(
        default=0.1,
        gt=0.0,
        lt=1.0,
        description="Least share of the view a condensation must forget.",
    )
    hard_context_reset_max_retries: int = Field(default=5, gt=0)
    hard_context_reset_context_scaling: float = Field(default=0.8, gt=0.0, lt=1.0)

    _token_cache: dict[str, int] = PrivateAttr(default_factory=dict)

    @model_validator(mode="after")
    def _room_to_condense(self) -> LLMSummarizingCondenser:
        if self.max_size // 2 - self.keep_first - 1 <= 0:
            raise ValueError(
                f"keep_first ({self.keep_first}) must be less than max_size // 2 - 1 "
                f"({self.max_size // 2 - 1}) to leave room for condensation: lower keep_first "
                "or raise max_size"
            )
        return self

    def handles_condensation_requests(self) -> bool:
        """Yes: a request condenses at once."""
        return True

    def _effective_max_tokens(self, agent_llm: LLM | None) -> int | None:
        limits = [
            self.max_tokens,
            agent_llm.effective_max_input_tokens if agent_llm is not None else None,
        ]
        known = [limit for limit in limits if limit]
        return min(known) if known else None

    def _count(self, events: Sequence[LLMConvertibleEvent], llm: LLM) -> int:
        return get_total_token_count(events, llm)

    def get_condensation_reasons(self, view: View, agent_llm: LLM | None = None) -> set[Reason]:
        """Every reason `view` should be condensed now (empty: none)."""
        reasons: set[Reason] = set()
        if view.unhandled_condensation_request:
            reasons.add(Reason.REQUEST)
        max_tokens = self._effective_max_tokens(agent_llm)
        if (
            max_tokens is not None
            and agent_llm is not None
            and token_upper_bound(view.events) > max_tokens  # else surely within: no count
            and self._count(view.events, agent_llm) > max_tokens
        ):
            reasons.add(Reason.TOKENS)
        if len(view) > self.max_size:
            reasons.add(Reason.EVENTS)
        return reasons

    def condensation_requirement(
        self, view: View, agent_llm: LLM | None = None
    ) -> CondensationRequirement | None:
        """HARD for a request or too many tokens, SOFT for too many events."""
        reasons = self.get_condensation_reasons(view, agent_llm)
        if not reasons:
            return None
        if reasons & {Reason.REQUEST, Reason.TOKENS}:
            return CondensationRequirement.HARD
        return CondensationRequirement.SOFT

    def _first_forgettable(self, view: View) -> int:
        return view.find_next_index(max(self.keep_first, view.protected_prefix))

    def _forgotten_range(self, view: View, agent_llm: LLM | None) -> tuple[int, int]:
        """[start, end) of the events to forget, on safe cut points."""
        reasons = self.get_condensation_reasons(view, agent_llm)
        keep_tail: list[int] = []
        if Reason.REQUEST in reasons:
            keep_tail.append(len(view) // 2 - self.keep_first - 1)
        if Reason.EVENTS in reasons:
            keep_tail.append(self.max_size // 2 - self.keep_first - 1)
        if Reason.TOKENS in reasons:
            max_tokens = self._effective_max_tokens(agent_llm)
            if max_tokens is not None and agent_llm is not None:
                reduce_by = self._count(view.events, agent_llm) - max_tokens // 2
                keep_tail.append(
                    get_suffix_length_for_token_reduction(
                        view.events[self.keep_first :], agent_llm, reduce_by, self._token_cache
                    )
                )
        start = self._first_forgettable(view)
        tail = max(0, min(keep_tail)) if keep_tail else len(view)
        end = view.find_next_index(max(start, len(view) - tail))
        return start, max(start, end)

    def get_condensation(self, view: View, agent_llm: LLM | None = None) -> Condensation:
        """Forget the middle of `view`, summarized; NoCondensationAvailableException when
        too little can be forgotten or the summary cannot be written."""
        start, end = self._forgotten_range(view, agent_llm)
        forgotten = view[start:end]
        if not forgotten:
            raise NoCondensationAvailableException(
                "nothing can be forgotten: the events after the kept first ones form one "
                "unbroken tool-call exchange; lower keep_first or raise max_size"
            )
        if len(forgotten) < len(view) * self.minimum_progress:
            raise NoCondensationAvailableException(
                f"forgetting {len(forgotten)} of {len(view)} events is below minimum_progress "
                f"({self.minimum_progress:g})"
            )
        return self._summarize(forgotten, start, view.condensation_focus)

    def hard_context_reset(self, view: View, agent_llm: LLM | None = None) -> Condensation | None:
        """Forget everything after the system prompt and the first user message, summarized;
        the events are cut shorter after each failed try."""
        start = view.find_next_index(view.protected_prefix)
        forgotten = view[start : max(start, view.manipulation_indices[-1])]
        if not forgotten:
            return None
        limit: int | None = None
        for _ in range(self.hard_context_reset_max_retries):
            try:
                return self._summarize(forgotten, start, view.condensation_focus, limit)
            except LLMCancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - retried smaller, then given up
                longest = limit or max(len(event_text(e)) for e in forgotten)
                limit = int(longest * self.hard_context_reset_context_scaling)
                logger.warning("hard context reset failed (%s); events cut to %d chars", exc, limit)
        return None

    def _summarize(
        self,
        forgotten: Sequence[LLMConvertibleEvent],
        offset: int,
        focus: str | None,
        limit: int | None = None,
    ) -> Condensation:
        prompt = summary_prompt([event_text(e, limit) for e in forgotten], focus)
        try:
            response = self.llm.completion(
                [Message(role="user", content=[TextContent(text=prompt)])], stream=False
            )
        except LLMCancelledError:
            raise
        except Exception as exc:
            raise NoCondensationAvailableException(f"the summarizing call failed: {exc}") from exc
        summary = response.message.text.strip() or None
        return Condensation(
            forgotten_event_ids=set(event_ids(forgotten)),
            summary=summary,
            summary_offset=offset,
            llm_response_id=response.id,
        )


DEFAULT_CONDENSER_MAX_SIZE = 80
"""`default_condenser`'s view size: the SDK's default agent and its sub-agents use it."""
DEFAULT_CONDENSER_KEEP_FIRST = 4


def default_condenser(llm: LLM) -> LLMSummarizingCondenser:
    """The summarizing condenser the default agent (and its sub-agents) use, writing with
    `llm`: at most 80 events in view, the first 4 always kept."""
    return LLMSummarizingCondenser(
        llm=llm, max_size=DEFAULT_CONDENSER_MAX_SIZE, keep_first=DEFAULT_CONDENSER_KEEP_FIRST
    )
