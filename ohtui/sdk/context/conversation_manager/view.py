"""ManagedView: the engine's side of a conversation manager.

The agent gives the view the chat messages it built from the events; the view keeps the
manager's edited copy between steps (stored events are never changed), fires the lifecycle
hooks, recovers from context-window overflows, and saves the manager's state with the
conversation (in `agent_state`) so a resumed conversation sends what it would have sent.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ohtui.sdk.context.conversation_manager.conversation_manager import ConversationManager
from ohtui.sdk.context.conversation_manager.hooks import (
    AfterInvocationEvent,
    BeforeModelCallEvent,
    HookRegistry,
)
from ohtui.sdk.llm.exceptions import LLMContextWindowExceedError
from ohtui.sdk.llm.message import Message

if TYPE_CHECKING:
    from ohtui.sdk.conversation.state import ConversationState
    from ohtui.sdk.llm.llm import LLM, LLMResponse

logger = logging.getLogger(__name__)

STATE_KEY = "conversation_manager"
"""The key of the manager's saved state in the conversation's `agent_state`."""
MAX_REDUCTIONS = 100
"""Overflow recoveries per model call before giving up (each must shrink the history)."""


class ManagedView:
    """The messages a conversation manager manages for one conversation (`messages`, `llm`)."""

    def __init__(self, manager: ConversationManager, llm: LLM) -> None:
        self.manager = manager
        self.llm = llm
        self.messages: list[Message] = []
        self.cancel: threading.Event | None = None
        """Set when the user interrupts: a summary being written is abandoned."""
        self.registry = HookRegistry()
        self.registry.add_hook(manager)
        self._taken = 0  # chat-history messages already in `messages`
        self._restored = False
        self._resumed: list[Message] | None = None  # what the saved state puts first

    def restore(self, state: ConversationState) -> None:
        """Take back the manager's saved state (once); a new conversation has none."""
        if self._restored:
            return
        self._restored = True
        saved = state.agent_state.get(STATE_KEY)
        if not saved:
            return
        try:
            self._resumed = list(self.manager.restore_from_session(saved) or [])
        except ValueError as exc:
            # Another strategy managed this conversation before: start over from the whole
            # history with this one (what the user chose now).
            logger.warning("%s; %s starts from the whole history", exc, type(self.manager).__name__)

    def sync(self, history: Sequence[dict[str, Any]]) -> None:
        """Add the chat messages the history gained since the last call."""
        if self._resumed is not None:
            # A resumed conversation: what the manager removed stays removed.
            start = min(self.manager.removed_message_count, len(history))
            self.messages = [*self._resumed, *map(Message.from_llm_chat_message, history[start:])]
            self._resumed = None
        else:
            self.messages.extend(map(Message.from_llm_chat_message, history[self._taken :]))
        self._taken = len(history)

    def complete(
        self,
        state: ConversationState,
        system: dict[str, Any],
        call: Callable[[list[dict[str, Any]]], LLMResponse],
        tools: list[dict[str, Any]],
    ) -> LLMResponse:
        """Fire BeforeModelCallEvent, then `call` the LLM with the system message and the
        managed messages; on a context-window overflow let the manager reduce and retry."""
        self.registry.invoke_callbacks(
            BeforeModelCallEvent(self, count_tokens=lambda: self._count(system, tools))
        )
        self.save(state)
        for _ in range(MAX_REDUCTIONS):
            try:
                return call([system, *(m.to_chat_dict() for m in self.messages)])
            except LLMContextWindowExceedError as error:
                before = list(self.messages)
                try:
                    self.manager.reduce_context(self, error)
                finally:
                    self.save(state)
                if self.messages == before:
                    raise  # the manager removed nothing: the retry would fail the same way
                logger.info("context window exceeded: reduced to %d messages", len(self.messages))
        raise LLMContextWindowExceedError(
            f"The conversation still does not fit the model's context window after "
            f"{MAX_REDUCTIONS} reductions. Start a new conversation or use a model with a "
            "larger context window.",
            model=self.llm.model,
        )

    def end_run(self, state: ConversationState) -> None:
        """Fire AfterInvocationEvent and apply the manager's strategy (after every run)."""
        try:
            self.registry.invoke_callbacks(AfterInvocationEvent(self))
            self.manager.apply_management(self)
        finally:
            self.save(state)

    def save(self, state: ConversationState) -> None:
        """Store the manager's state with the conversation when it changed."""
        current = self.manager.get_state()
        if state.agent_state.get(STATE_KEY) != current and not state.read_only:
            state.agent_state = {**state.agent_state, STATE_KEY: current}

    def _count(self, system: dict[str, Any], tools: list[dict[str, Any]]) -> int | None:
        """The request's input tokens by litellm's offline tokenizers; None if it cannot tell."""
        from ohtui.sdk.llm._litellm import litellm

        chat = [system, *(m.to_chat_dict() for m in self.messages)]
        try:
            return int(litellm().token_counter(model=self.llm.model, messages=chat, tools=tools))
        except Exception:
            logger.debug("cannot count tokens for %s", self.llm.model, exc_info=True)
            return None
