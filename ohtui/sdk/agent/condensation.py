"""CondensedHistory: the messages an agent sends, built from the condensed view of the log.

The agent's step asks this one object for its messages; it replays the log through a
View (so recorded condensations apply, before and after a restart alike), lets the
condenser condense when it wants to, and turns the view into chat messages, each event
once until a condensation changes the view.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Sequence
from typing import Any

from ohtui.sdk.agent.history import ChatHistory, MessageCache
from ohtui.sdk.context.condenser.base import CondenserBase, NoCondensationAvailableException
from ohtui.sdk.context.view import IncrementalView, View
from ohtui.sdk.event.base import Event
from ohtui.sdk.event.condenser import Condensation, CondensationRequest
from ohtui.sdk.llm.exceptions import LLMContextWindowExceedError
from ohtui.sdk.llm.llm import LLM

HOW_TO_CONFIGURE = (
    "To condense, give the agent a condenser that does, e.g. Agent(llm=llm, tools=..., "
    "condenser=LLMSummarizingCondenser(llm=llm.model_copy(update={'usage_id': 'condenser'}), "
    "max_size=80, keep_first=4)) with LLMSummarizingCondenser from ohtui.sdk.context."
)


def no_condenser_message(condenser: CondenserBase | None) -> str:
    """Why `condense()` cannot condense, and how to configure a condenser that can."""
    why = (
        "No condenser configured"
        if condenser is None
        else f"Condenser {type(condenser).__name__} does not handle condensation requests"
    )
    return f"Cannot condense conversation: {why}. {HOW_TO_CONFIGURE}"


class CondensedHistory:
    """The condensed view of one conversation's log, and its chat messages."""

    def __init__(self) -> None:
        self._view = IncrementalView()
        self._cache = MessageCache()
        self._chat = ChatHistory(self._cache)
        self._generation = 0

    def view(self, events: Sequence[Event], skip: Container[str] = ()) -> View:
        """The view of `events` (the conversation's log) as it stands."""
        return self._view.update(events, skip)

    def messages(self, events: Sequence[Event], skip: Container[str] = ()) -> list[dict[str, Any]]:
        """The chat messages of the current view (without the system prompt)."""
        view = self.view(events, skip)
        if self._view.generation != self._generation:  # a condensation replaced the view
            self._chat = ChatHistory(self._cache)
            self._generation = self._view.generation
            messages = self._chat.update(view.events)
            self._cache.keep_only(view.event_ids())
            return messages
        return self._chat.update(view.events)

    def maybe_condense(
        self,
        condenser: CondenserBase | None,
        events: Sequence[Event],
        agent_llm: LLM,
        on_event: Callable[[Event], None],
        skip: Container[str] = (),
    ) -> Condensation | None:
        """Let `condenser` condense the view; record and return its Condensation, if any."""
        if condenser is None:
            return None
        result = condenser.condense(self.view(events, skip), agent_llm=agent_llm)
        if not isinstance(result, Condensation):
            return None
        on_event(result)
        return result

    def condense_on_request(
        self,
        condenser: CondenserBase | None,
        events: Sequence[Event],
        agent_llm: LLM,
        on_event: Callable[[Event], None],
        skip: Container[str] = (),
        focus: str | None = None,
    ) -> Condensation:
        """Record a CondensationRequest and condense at once.

        ValueError (saying how to configure one) without a condenser that handles
        requests; NoCondensationAvailableException when nothing can be condensed.
        """
        if condenser is None or not condenser.handles_condensation_requests():
            raise ValueError(no_condenser_message(condenser))
        on_event(CondensationRequest(focus=focus))
        condensation = self.maybe_condense(condenser, events, agent_llm, on_event, skip)
        if condensation is None:
            raise NoCondensationAvailableException(
                "the condenser found nothing to condense in this conversation"
            )
        return condensation


def overflow_error(
    cause: LLMContextWindowExceedError, agent_llm: LLM, detail: str
) -> LLMContextWindowExceedError:
    """The error for a history that does not fit the window: `detail` says what to do."""
    window = agent_llm.context_window
    size = f" ({window:,} tokens)" if window else ""
    error = LLMContextWindowExceedError(
        f"The conversation no longer fits the context window of '{agent_llm.model}'{size}. "
        f"{detail}",
        model=cause.model,
        status_code=cause.status_code,
    )
    error.summary = "the conversation no longer fits the context window"
    return error
