"""SlidingWindowConversationManager: keep the newest messages, never splitting a tool call."""

from __future__ import annotations

import logging
from typing import Any

from ohtui.sdk.context.conversation_manager._messages import (
    calls_answered_from,
    has_tool_calls,
    is_tool_result,
    oldest_tool_results,
    truncate_tool_result,
)
from ohtui.sdk.context.conversation_manager.conversation_manager import (
    ContextWindowOverflowException,
    ConversationManager,
    ProactiveCompression,
)
from ohtui.sdk.context.conversation_manager.hooks import (
    BeforeModelCallEvent,
    HookRegistry,
    ManagedAgent,
)
from ohtui.sdk.llm.message import Message

logger = logging.getLogger(__name__)

CANNOT_TRIM = (
    "Unable to trim conversation context! No cut of the history leaves a valid conversation "
    "(it must start at a user message or a complete tool call). Start a new conversation or "
    "use a model with a larger context window."
)


class SlidingWindowConversationManager(ConversationManager):
    """Keeps at most `window_size` messages, dropping the oldest.

    On an overflow it first truncates the oldest tool results (the first and last 200
    characters stay; images become a placeholder), then trims. The history never starts
    with a tool result or with a tool call whose results do not follow. `per_turn` (True,
    or N) also applies the window before every (Nth) model call.
    """

    def __init__(
        self,
        window_size: int = 40,
        should_truncate_results: bool = True,
        *,
        per_turn: bool | int = False,
        proactive_compression: ProactiveCompression = None,
    ) -> None:
        """ValueError for a negative `window_size` or a `per_turn` of 0 or less."""
        if isinstance(window_size, bool) or not isinstance(window_size, int):
            raise ValueError(f"window_size must be a non-negative integer, got {window_size!r}")
        if window_size < 0:
            raise ValueError(f"window_size must be a non-negative integer, got {window_size}")
        if not isinstance(per_turn, int) or (not isinstance(per_turn, bool) and per_turn <= 0):
            raise ValueError(f"per_turn must be a positive integer, True, or False, got {per_turn}")
        super().__init__(proactive_compression=proactive_compression)
        self.window_size = window_size
        self.should_truncate_results = should_truncate_results
        self.per_turn = per_turn
        self._model_call_count = 0

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        """Also apply the window before model calls, as `per_turn` says."""
        super().register_hooks(registry, **kwargs)
        registry.add_callback(BeforeModelCallEvent, self._on_before_model_call)

    def _on_before_model_call(self, event: BeforeModelCallEvent) -> None:
        if self.per_turn is False:
            return
        self._model_call_count += 1
        if self.per_turn is True or self._model_call_count % self.per_turn == 0:
            logger.debug("model call %d: applying the window", self._model_call_count)
            self.apply_management(event.agent)

    def get_state(self) -> dict[str, Any]:
        """The base state plus the model calls counted for `per_turn`."""
        return {**super().get_state(), "model_call_count": self._model_call_count}

    def restore_from_session(self, state: dict[str, Any]) -> list[Message] | None:
        """Take back the saved state, including the `per_turn` count."""
        result = super().restore_from_session(state)
        self._model_call_count = int(state.get("model_call_count", 0))
        return result

    def to_config(self) -> dict[str, Any]:
        """The constructor arguments, with the class as `kind`."""
        return {
            **super().to_config(),
            "window_size": self.window_size,
            "should_truncate_results": self.should_truncate_results,
            "per_turn": self.per_turn,
        }

    def apply_management(self, agent: ManagedAgent, **kwargs: Any) -> None:
        """Trim the oldest messages when there are more than `window_size`."""
        if len(agent.messages) <= self.window_size:
            return
        self.reduce_context(agent)

    def reduce_context(
        self, agent: ManagedAgent, e: Exception | None = None, **kwargs: Any
    ) -> None:
        """Truncate the oldest tool results (on an overflow only), else trim the oldest
        messages. ContextWindowOverflowException when nothing can go and `e` is given."""
        messages = agent.messages
        if self.window_size == 0:
            self.removed_message_count += len(messages)
            messages[:] = []
            return
        if e is not None and self.should_truncate_results and self._truncate_oldest(messages):
            return
        trim_index = self._trim_index(messages)
        if trim_index is None:
            if e is not None:
                raise ContextWindowOverflowException(
                    CANNOT_TRIM, model=getattr(agent.llm, "model", None)
                ) from e
            logger.warning(
                "window %d, %d messages: no valid trim point", self.window_size, len(messages)
            )
            return
        self.removed_message_count += trim_index
        messages[:] = messages[trim_index:]

    def _trim_index(self, messages: list[Message]) -> int | None:
        """How many of the oldest messages to drop: to the window, or 2 when within it, then
        on to a user message (else to a complete tool call batch); None when none fits."""
        index = 2 if len(messages) <= self.window_size else len(messages) - self.window_size
        fallback: int | None = None
        while index < len(messages):
            message = messages[index]
            if message.role == "user" and not is_tool_result(message):
                return index
            if fallback is None and has_tool_calls(message):
                fallback = index if calls_answered_from(messages, index) else None
            index += 1
        return fallback

    @staticmethod
    def _truncate_oldest(messages: list[Message]) -> bool:
        """Truncate the oldest batch of tool results; False when they are short or cut already."""
        batch = oldest_tool_results(messages)
        if batch is None:
            return False
        changed = False
        for index in batch:
            cut = truncate_tool_result(messages[index])
            if cut is not None:
                messages[index] = cut
                changed = True
        return changed
