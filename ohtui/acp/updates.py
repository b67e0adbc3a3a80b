"""A conversation's events and streamed tokens as ACP `session/update`s: message and thought
chunks, tool calls and their updates, the plan, the title.

One `Updates` per session, live or replaying a saved conversation: it remembers which
responses were streamed already (their text is not sent twice when the event arrives) and
which actions are open (an edit's result shows the action's diff).
"""

from __future__ import annotations

from typing import Any

from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    AgentThoughtChunk,
    CurrentModeUpdate,
    ImageContentBlock,
    SessionInfoUpdate,
    TextContentBlock,
    ToolCallProgress,
    ToolCallStart,
    UserMessageChunk,
)

from ohtui.acp import tool_calls
from ohtui.sdk import (
    ActionEvent,
    AgentErrorEvent,
    ConversationExecutionStatus,
    ConversationStateUpdateEvent,
    Event,
    ImageContent,
    MessageEvent,
    ObservationEvent,
    TextContent,
    UserRejectObservation,
)
from ohtui.sdk.llm import LLMStreamChunk
from ohtui.sdk.tool.builtins.finish import FinishAction
from ohtui.sdk.tool.builtins.think import ThinkAction

Update = (
    AgentMessageChunk
    | AgentThoughtChunk
    | UserMessageChunk
    | ToolCallStart
    | ToolCallProgress
    | AgentPlanUpdate
    | SessionInfoUpdate
    | CurrentModeUpdate
)


class Updates:
    """Turns one conversation's events (and streamed tokens) into session updates."""

    def __init__(self, working_dir: str, replay: bool = False) -> None:
        """`replay`: a saved conversation shown again (its user messages are sent too)."""
        self._working_dir = working_dir
        self._replay = replay
        self._streamed_text: set[str] = set()
        self._streamed_thought: set[str] = set()
        self._actions: dict[str, ActionEvent] = {}
        self._opened: list[str] = []
        """Tool calls opened by the latest batch of actions, not yet known to run or wait."""

    def of_token(self, chunk: LLMStreamChunk) -> list[Update]:
        """A streamed delta: a message chunk, a thought chunk, or nothing."""
        updates: list[Update] = []
        if chunk.reasoning_content:
            self._streamed_thought.add(chunk.response_id)
            updates.append(_thought(chunk.reasoning_content))
        if chunk.content:
            self._streamed_text.add(chunk.response_id)
            updates.append(_message(chunk.content))
        return updates

    def of_event(self, event: Event) -> list[Update]:
        """What the client is told of one event (nothing, for most bookkeeping events).

        Tool calls open `pending`; the first event after their batch says whether they run
        (anything but the conversation coming to wait for approval: they are `in_progress`
        from then) or wait (they run once approved, see `approved`)."""
        if isinstance(event, ActionEvent):
            return self._action(event)
        if isinstance(event, ConversationStateUpdateEvent):  # no news of the actions
            waiting = ConversationExecutionStatus.WAITING_FOR_CONFIRMATION.value
            if event.key == "execution_status" and event.value == waiting:
                self._opened.clear()
            if event.key == "title" and event.value:
                title = str(event.value)
                return [SessionInfoUpdate(session_update="session_info_update", title=title)]
            return []
        running = [_progress(call, "in_progress", None) for call in self._opened]
        self._opened.clear()
        return [*running, *self._of_other(event)]

    def _of_other(self, event: Event) -> list[Update]:
        if isinstance(event, MessageEvent):
            return self._message_event(event)
        if isinstance(event, ObservationEvent):
            return self._observation(event)
        if isinstance(event, UserRejectObservation):
            self._actions.pop(event.action_id, None)
            reason = f"Rejected: {event.rejection_reason}"
            return [_progress(event.tool_call_id, "failed", [tool_calls.text_content(reason)])]
        if isinstance(event, AgentErrorEvent):
            return [_progress(event.tool_call_id, "failed", [tool_calls.text_content(event.error)])]
        return []

    def approved(self, action: ActionEvent) -> ToolCallProgress:
        """The action was allowed: it runs now."""
        return _progress(action.tool_call_id, "in_progress", None)

    def _message_event(self, event: MessageEvent) -> list[Update]:
        message = event.llm_message
        if event.source == "user":
            if not self._replay:
                return []  # the client sent it, and shows it
            return [
                UserMessageChunk(session_update="user_message_chunk", content=block)
                for block in _blocks(message.content)
            ]
        if event.source != "agent":
            return []
        response = event.llm_response_id or ""
        updates: list[Update] = []
        if message.reasoning_content and response not in self._streamed_thought:
            updates.append(_thought(message.reasoning_content))
        if response not in self._streamed_text:
            updates.extend(
                AgentMessageChunk(session_update="agent_message_chunk", content=block)
                for block in _blocks(message.content)
            )
        return updates

    def _action(self, event: ActionEvent) -> list[Update]:
        updates: list[Update] = []
        response = event.llm_response_id
        if event.reasoning_content and response not in self._streamed_thought:
            self._streamed_thought.add(response)  # once per response, not per action
            updates.append(_thought(event.reasoning_content))
        thought = "".join(t.text for t in event.thought)
        if thought.strip() and response not in self._streamed_text:
            self._streamed_text.add(response)
            updates.append(_message(thought))
        inner = event.action
        if isinstance(inner, FinishAction):
            if inner.message.strip():
                updates.append(_message(("\n\n" if thought.strip() else "") + inner.message))
            return updates
        if isinstance(inner, ThinkAction):
            updates.append(_thought(inner.thought))
            return updates
        self._actions[event.id] = event
        self._opened.append(event.tool_call_id)
        updates.append(self.start(event))
        return updates

    def start(self, event: ActionEvent, status: str = "pending") -> ToolCallStart:
        """The tool call an action opens."""
        return ToolCallStart(
            session_update="tool_call",
            tool_call_id=event.tool_call_id,
            title=tool_calls.title_of(event),
            kind=tool_calls.kind_of(event),
            status=status,
            locations=tool_calls.locations_of(event, self._working_dir),
            content=tool_calls.proposed_content(event, self._working_dir),
            raw_input=tool_calls.raw_input_of(event),
        )

    def _observation(self, event: ObservationEvent) -> list[Update]:
        action = self._actions.pop(event.action_id, None)
        if event.tool_name in ("finish", "think"):
            return []
        status, content = tool_calls.result_of(action, event, self._working_dir)
        updates: list[Update] = [_progress(event.tool_call_id, status, content)]
        entries = tool_calls.plan_entries(action, event)
        if entries is not None:
            updates.append(AgentPlanUpdate(session_update="plan", entries=entries))
        return updates


def _message(text: str) -> AgentMessageChunk:
    return AgentMessageChunk(
        session_update="agent_message_chunk", content=TextContentBlock(type="text", text=text)
    )


def _thought(text: str) -> AgentThoughtChunk:
    return AgentThoughtChunk(
        session_update="agent_thought_chunk", content=TextContentBlock(type="text", text=text)
    )


def _progress(tool_call_id: str, status: str, content: list[Any] | None) -> ToolCallProgress:
    return ToolCallProgress(
        session_update="tool_call_update",
        tool_call_id=tool_call_id,
        status=status,
        content=content or None,
    )


def _blocks(content: Any) -> list[TextContentBlock | ImageContentBlock]:
    """A message's text and images as content blocks."""
    blocks: list[TextContentBlock | ImageContentBlock] = []
    for part in content:
        if isinstance(part, TextContent) and part.text:
            blocks.append(TextContentBlock(type="text", text=part.text))
        elif isinstance(part, ImageContent):
            blocks.extend(_image_blocks(part))
    return blocks


def _image_blocks(part: ImageContent) -> list[ImageContentBlock]:
    blocks = []
    for url in part.image_urls:
        head, _, data = url.partition(",")
        if head.startswith("data:") and ";base64" in head:
            mime = head[len("data:") :].split(";")[0]
            blocks.append(ImageContentBlock(type="image", data=data, mime_type=mime))
    return blocks
