"""ChatHistory: the conversation as chat messages, built incrementally as events arrive."""

from __future__ import annotations

from collections.abc import Container, Iterable, Sequence
from typing import Any

from ohtui.sdk.event.base import Event, LLMConvertibleEvent
from ohtui.sdk.event.llm_convertible.action import ActionEvent
from ohtui.sdk.event.llm_convertible.message import MessageEvent
from ohtui.sdk.event.llm_convertible.observation import ObservationBaseEvent
from ohtui.sdk.event.llm_convertible.system import SystemPromptEvent
from ohtui.sdk.llm.wire import EncodedMessage


class MessageCache:
    """Each event's chat message, converted (and later encoded) once, by event id.

    Events never change, so neither do their messages: a condensation changes which
    events are in the view, never what an event says. A history rebuilt after one takes
    the messages of the events it keeps from here; `keep_only` forgets the others.
    """

    def __init__(self) -> None:
        self._messages: dict[str, EncodedMessage] = {}
        self._calls: dict[str, dict[str, Any]] = {}

    def __len__(self) -> int:
        return len(self._messages) + len(self._calls)

    def message(self, event: LLMConvertibleEvent) -> EncodedMessage:
        """The chat message of `event`."""
        message = self._messages.get(event.id)
        if message is None:
            message = EncodedMessage(event.to_llm_message().to_chat_dict())
            self._messages[event.id] = message
        return message

    def tool_call(self, event: ActionEvent) -> dict[str, Any]:
        """The `tool_calls` entry of an action that joins its response's first action."""
        call = self._calls.get(event.id)
        if call is None:
            call = self._calls[event.id] = event.tool_call.to_chat_dict()
        return call

    def keep_only(self, ids: Iterable[str]) -> None:
        """Forget the messages of events other than `ids` (those left the view)."""
        keep = set(ids)
        self._messages = {k: v for k, v in self._messages.items() if k in keep}
        self._calls = {k: v for k, v in self._calls.items() if k in keep}


class ChatHistory:
    """Converts a conversation's events to chat-completions dicts, each event once.

    Events are append-only, so each step converts only the events added since the last
    one: the engine's work per step stays constant however long the history grows. Each
    message is an EncodedMessage (never changed once made; its JSON encoded once), taken
    from a MessageCache that a rebuilt history can share.
    Recorded SystemPromptEvents are skipped (the agent sends its current prompt, so a
    resumed conversation can use new prompts), and so are agent replies without text. A
    message that arrives while tool calls are still unanswered (e.g. the user writes while
    actions await approval) is placed after their results, because providers require
    results to follow their calls.
    """

    def __init__(self, cache: MessageCache | None = None) -> None:
        self._cache = cache if cache is not None else MessageCache()
        self._seen = 0
        self._messages: list[dict[str, Any]] = []
        self._batch_id: str | None = None
        self._open_calls: set[str] = set()
        self._deferred: list[dict[str, Any]] = []

    def update(self, events: Sequence[Event], skip: Container[str] = ()) -> list[dict[str, Any]]:
        """Take in the events added since the last call; return all messages so far.

        Events whose id is in `skip` (user messages a hook blocked) are left out.
        """
        total = len(events)
        if self._seen < total:
            for event in events[self._seen : total]:
                if event.id not in skip:
                    self._add(event)
            self._seen = total
        return self._messages

    def answered(self) -> list[dict[str, Any]]:
        """All messages, leaving out tool calls that have no result yet (for side questions)."""
        if not self._open_calls:
            return [*self._messages, *self._deferred]
        out: list[dict[str, Any]] = []
        for message in self._messages:
            calls = message.get("tool_calls")
            if not (calls and any(c["id"] in self._open_calls for c in calls)):
                out.append(message)
                continue
            kept = [c for c in calls if c["id"] not in self._open_calls]
            trimmed = {k: v for k, v in message.items() if k != "tool_calls"}
            if kept:
                trimmed["tool_calls"] = kept
            if kept or trimmed.get("content"):
                out.append(trimmed)
        return [*out, *self._deferred]

    def _add(self, event: Event) -> None:
        if not isinstance(event, LLMConvertibleEvent) or isinstance(event, SystemPromptEvent):
            return
        if isinstance(event, MessageEvent) and event.source == "agent" and not event.text.strip():
            return  # an empty reply tells the model nothing, and some providers refuse one
        if isinstance(event, ActionEvent):
            self._open_calls.add(event.tool_call_id)
            if event.llm_response_id == self._batch_id and self._messages:
                # A new message, not an edit: a sent message keeps its cached JSON.
                last = self._messages[-1]
                calls = [*(last.get("tool_calls") or ()), self._cache.tool_call(event)]
                self._messages[-1] = EncodedMessage({**last, "tool_calls": calls})
                return
            self._batch_id = event.llm_response_id
            self._messages.append(self._cache.message(event))
            return
        self._batch_id = None
        message = self._cache.message(event)
        if isinstance(event, ObservationBaseEvent):
            self._messages.append(message)
            self._open_calls.discard(event.tool_call_id)
            if not self._open_calls and self._deferred:
                self._messages.extend(self._deferred)
                self._deferred.clear()
        elif self._open_calls:
            self._deferred.append(message)
        else:
            self._messages.append(message)
