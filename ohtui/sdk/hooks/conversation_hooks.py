"""Hooks driven by a conversation's event stream: HookEventProcessor, create_hook_callback.

A conversation made with `hook_config` runs its hooks itself, at the moment each applies
(PreToolUse just before the tool runs). This is the other way, for code that wires hooks
as an event callback: the processor watches the events go by, runs the hooks an event
calls for, records each run as a HookExecutionEvent, and marks what a hook blocked in the
conversation's state (`block_action`, `block_message`), which the agent honours.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ohtui.sdk.event.base import Event
from ohtui.sdk.event.llm_convertible.action import ActionEvent
from ohtui.sdk.event.llm_convertible.message import MessageEvent
from ohtui.sdk.event.llm_convertible.observation import ObservationEvent
from ohtui.sdk.hooks.config import HookConfig
from ohtui.sdk.hooks.result import HookResult
from ohtui.sdk.hooks.runner import HookManager, hook_execution_event
from ohtui.sdk.hooks.types import HookEventType
from ohtui.sdk.llm.message import TextContent

if TYPE_CHECKING:
    from ohtui.sdk.conversation.state import ConversationState
    from ohtui.sdk.conversation.stats import ConversationStats
    from ohtui.sdk.conversation.visualizer.base import ConversationVisualizerBase
    from ohtui.sdk.llm.llm import LLM

__all__ = ["EventEmitter", "HookEventProcessor", "create_hook_callback"]

logger = logging.getLogger(__name__)

EventEmitter = Callable[[Event], None]
"""A callback that takes events."""


class HookEventProcessor:
    """Runs hooks for the events passed to `on_event`, then hands each event on.

    PreToolUse hooks run for an ActionEvent, PostToolUse for an ObservationEvent (with its
    action, found in the state's events), UserPromptSubmit for a user MessageEvent (the
    context hooks add is appended to the message's `extended_content`). Blocking needs the
    state: call `set_conversation_state` once the conversation exists. With
    `emit_hook_events`, each hook's run goes to `original_callback` as a HookExecutionEvent
    before the event it ran for.
    """

    def __init__(
        self,
        hook_manager: HookManager,
        original_callback: EventEmitter | None = None,
        emit_hook_events: bool = True,
    ) -> None:
        self.hook_manager = hook_manager
        self.original_callback = original_callback
        self.emit_hook_events = emit_hook_events
        self._conversation_state: ConversationState | None = None

    def set_conversation_state(self, state: ConversationState) -> None:
        """The state whose actions and messages a hook's block marks."""
        self._conversation_state = state

    def on_event(self, event: Event) -> None:
        """Run the hooks `event` calls for, then pass it (perhaps extended) on."""
        if isinstance(event, ActionEvent) and event.action is not None:
            self._pre_tool_use(event)
        elif isinstance(event, ObservationEvent):
            self._post_tool_use(event)
        elif isinstance(event, MessageEvent) and event.source == "user":
            event = self._user_prompt_submit(event)
        if self.original_callback is not None:
            self.original_callback(event)

    def is_action_blocked(self, action_id: str) -> bool:
        """Whether a hook blocked this action (False without a state)."""
        state = self._conversation_state
        return state is not None and action_id in state.blocked_actions

    def is_message_blocked(self, message_id: str) -> bool:
        """Whether a hook blocked this user message (False without a state)."""
        state = self._conversation_state
        return state is not None and message_id in state.blocked_messages

    def run_session_start(self) -> None:
        """Run the SessionStart hooks (call once the conversation exists)."""
        results = self.hook_manager.run_session_start()
        self._record(HookEventType.SESSION_START, results)

    def run_session_end(self) -> None:
        """Run the SessionEnd hooks (call before the conversation closes)."""
        results = self.hook_manager.run_session_end()
        self._record(HookEventType.SESSION_END, results)

    def run_stop(self, reason: str | None = None) -> tuple[bool, str | None]:
        """Run the Stop hooks: (whether the agent may stop, the feedback of those denying).

        The feedback is the context the hooks add, else why they blocked.
        """
        if not self.hook_manager.has_hooks(HookEventType.STOP):
            return True, None
        may_stop, results = self.hook_manager.run_stop(reason=reason)
        self._record(HookEventType.STOP, results, hook_input={"reason": reason} if reason else None)
        if may_stop:
            return True, None
        context = "\n".join(r.additional_context for r in results if r.additional_context)
        return False, context or self.hook_manager.get_blocking_reason(results)

    # --- per event --------------------------------------------------------------------------

    def _pre_tool_use(self, event: ActionEvent) -> None:
        if not self.hook_manager.has_hooks(HookEventType.PRE_TOOL_USE):
            return
        tool_input = _dump(event.action)
        may_run, results = self.hook_manager.run_pre_tool_use(event.tool_name, tool_input)
        self._record(
            HookEventType.PRE_TOOL_USE,
            results,
            tool_name=event.tool_name,
            action_id=event.id,
            hook_input={"tool_name": event.tool_name, "tool_input": tool_input},
        )
        if may_run:
            return
        reason = self.hook_manager.get_blocking_reason(results) or "Blocked by hook"
        if self._conversation_state is None:
            logger.warning(
                "A PreToolUse hook blocked %s, but no conversation state is set to record it: "
                "call set_conversation_state(conversation.state)",
                event.tool_name,
            )
            return
        self._conversation_state.block_action(event.id, reason)

    def _post_tool_use(self, event: ObservationEvent) -> None:
        if not self.hook_manager.has_hooks(HookEventType.POST_TOOL_USE):
            return
        action = self._action_of(event)
        if action is None:
            return  # its input is unknown: the hooks are not asked about half an event
        tool_input, tool_response = _dump(action.action), _dump(event.observation)
        results = self.hook_manager.run_post_tool_use(event.tool_name, tool_input, tool_response)
        self._record(
            HookEventType.POST_TOOL_USE,
            results,
            tool_name=event.tool_name,
            action_id=action.id,
            hook_input={
                "tool_name": event.tool_name,
                "tool_input": tool_input,
                "tool_response": tool_response,
            },
        )

    def _user_prompt_submit(self, event: MessageEvent) -> MessageEvent:
        if not self.hook_manager.has_hooks(HookEventType.USER_PROMPT_SUBMIT):
            return event
        text = "".join(c.text for c in event.llm_message.content if isinstance(c, TextContent))
        may_send, context, results = self.hook_manager.run_user_prompt_submit(text)
        self._record(
            HookEventType.USER_PROMPT_SUBMIT,
            results,
            message_id=event.id,
            hook_input={"message": text},
        )
        if not may_send:
            reason = self.hook_manager.get_blocking_reason(results) or "Blocked by hook"
            if self._conversation_state is not None:
                self._conversation_state.block_message(event.id, reason)
            else:
                logger.warning(
                    "A UserPromptSubmit hook blocked a message, but no conversation state is "
                    "set to record it: call set_conversation_state(conversation.state)"
                )
        if not context:
            return event
        # Same id: a block recorded above, and anything that saw the id, still names it.
        extended = [*event.extended_content, TextContent(text=context)]
        return event.model_copy(update={"extended_content": extended})

    def _action_of(self, event: ObservationEvent) -> ActionEvent | None:
        state = self._conversation_state
        if state is None:
            return None
        try:
            found = state.events[state.events.get_index(event.action_id)]
        except (KeyError, IndexError):
            return None
        return found if isinstance(found, ActionEvent) else None

    def _record(
        self,
        event_type: HookEventType,
        results: list[HookResult],
        *,
        tool_name: str | None = None,
        action_id: str | None = None,
        message_id: str | None = None,
        hook_input: dict[str, Any] | None = None,
    ) -> None:
        for result in results:
            if result.error:
                logger.warning("%s %s: %s", event_type.value, result.label, result.error)
        if not self.emit_hook_events or self.original_callback is None:
            return
        for result in results:
            self.original_callback(
                hook_execution_event(
                    event_type,
                    result,
                    tool_name=tool_name,
                    action_id=action_id,
                    message_id=message_id,
                    hook_input=hook_input,
                )
            )


def _dump(model: Any) -> dict[str, Any]:
    """An action or observation as the JSON data a hook is given ({} when there is none)."""
    if model is None:
        return {}
    dumped: dict[str, Any] = model.model_dump(mode="json")
    return dumped


def create_hook_callback(
    hook_config: HookConfig | None = None,
    working_dir: str | None = None,
    session_id: str | None = None,
    original_callback: EventEmitter | None = None,
    emit_hook_events: bool = True,
    llm: LLM | None = None,
    llm_getter: Callable[[], LLM | None] | None = None,
    persistence_dir: str | None = None,
    visualizer: type[ConversationVisualizerBase] | ConversationVisualizerBase | None = None,
    conversation_stats: ConversationStats | None = None,
) -> tuple[HookEventProcessor, EventEmitter]:
    """A processor running `hook_config`'s hooks, and its `on_event` to use as a callback.

    `llm` / `llm_getter`: what prompt and agent hooks ask; `conversation_stats`: where their
    cost is counted. `persistence_dir` is accepted for the SDK's signature: an agent hook's
    own conversation is kept in memory, never saved.
    """
    del persistence_dir
    manager = HookManager(
        config=hook_config,
        working_dir=working_dir,
        session_id=session_id,
        llm=llm,
        llm_getter=llm_getter,
        visualizer=visualizer,
        conversation_stats=conversation_stats,
    )
    processor = HookEventProcessor(
        hook_manager=manager,
        original_callback=original_callback,
        emit_hook_events=emit_hook_events,
    )
    return processor, processor.on_event
