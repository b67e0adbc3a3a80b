"""EventLog: the conversation's append-only sequence of events, persisted or in memory."""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from typing import Any, overload

from ohtui.sdk.conversation.store import LOCK_TIMEOUT_SECONDS, ConversationStore
from ohtui.sdk.event.base import Event
from ohtui.sdk.event.llm_convertible.action import ActionEvent
from ohtui.sdk.event.llm_convertible.message import MessageEvent
from ohtui.sdk.event.types import EventID

PAGE_SIZE = 256


class EventsListBase(Sequence[Event], ABC):
    """A sequence of events that can be appended to (local or remote)."""

    @abstractmethod
    def append(self, event: Event) -> None:
        """Add a new event to the end."""


class EventLog(EventsListBase):
    """The events of one conversation, in order.

    With a store, every `append` is durable when it returns and events are read back
    lazily, a page at a time, the first time they are needed; without one, events live in
    memory only. Safe to use from several threads (and processes, through the store).
    """

    def __init__(
        self,
        store: ConversationStore | None = None,
        key: int | None = None,
        pending_state: Callable[[], tuple[str, dict[str, Any]] | None] | None = None,
    ) -> None:
        """`pending_state` returns unsaved conversation state to commit with the next event."""
        if (store is None) != (key is None):
            raise ValueError("an EventLog needs both a store and a conversation key, or neither")
        self._store = store
        self._key = key
        self._pending_state = pending_state
        self._lock = threading.RLock()
        self._length = store.event_count(key) if store is not None and key is not None else 0
        self._events: list[Event | None] = [None] * self._length
        self._index_by_id: dict[EventID, int] = {}

    def __len__(self) -> int:
        return self._length

    @overload
    def __getitem__(self, index: int) -> Event: ...

    @overload
    def __getitem__(self, index: slice) -> list[Event]: ...

    def __getitem__(self, index: int | slice) -> Event | list[Event]:
        with self._lock:
            if isinstance(index, slice):
                positions = range(*index.indices(self._length))
                if positions.step == 1 and positions:
                    self._load(positions.start, positions.stop)
                return [self._get(i) for i in positions]
            if index < 0:
                index += self._length
            if not 0 <= index < self._length:
                raise IndexError(f"event index {index} out of range (0..{self._length - 1})")
            return self._get(index)

    def __iter__(self) -> Iterator[Event]:
        start = 0
        while start < self._length:
            with self._lock:
                stop = min(start + PAGE_SIZE, self._length)
                page = self[start:stop]
            yield from page
            start = stop

    def __reversed__(self) -> Iterator[Event]:
        stop = self._length
        while stop > 0:
            with self._lock:
                start = max(0, stop - PAGE_SIZE)
                page = self[start:stop]
            yield from reversed(page)
            stop = start

    def get_index(self, event_id: EventID) -> int:
        """The index of the event with this id (KeyError if there is none)."""
        with self._lock:
            index = self._index_by_id.get(event_id)
            if index is None and self._store is not None and self._key is not None:
                index = self._store.event_index(self._key, event_id)
            if index is None:
                raise KeyError(f"no event with id '{event_id}'")
            return index

    def get_id(self, idx: int) -> EventID:
        """The id of the event at `idx` (negative indexes count from the end)."""
        return self[idx].id

    def append(self, event: Event) -> None:
        """Append durably.

        Raises ValueError if an event with the same id is already in the log, and
        TimeoutError if the log stays locked for LOCK_TIMEOUT_SECONDS.
        """
        if not self._lock.acquire(timeout=LOCK_TIMEOUT_SECONDS):
            raise TimeoutError(f"the event log stayed locked for {LOCK_TIMEOUT_SECONDS:g} s")
        try:
            if event.id in self._index_by_id:
                raise _duplicate(event.id, self._index_by_id[event.id])
            if self._store is not None and self._key is not None:
                try:
                    index = self._store.append(
                        self._key,
                        event.id,
                        event.kind,
                        event.model_dump_json(),
                        search_text=_search_text(event),
                        first_user_message=_user_text(event),
                        state=self._pending_state() if self._pending_state else None,
                    )
                except ValueError:
                    existing = self._store.event_index(self._key, event.id)
                    if existing is None:
                        raise
                    raise _duplicate(event.id, existing) from None
                if index > self._length:  # another process appended meanwhile
                    self._events.extend([None] * (index - self._length))
            else:
                index = self._length
            self._events.append(event)
            self._index_by_id[event.id] = index
            self._length = index + 1
        finally:
            self._lock.release()

    def _get(self, index: int) -> Event:
        event = self._events[index]
        if event is None:
            self._load(index, min(index + PAGE_SIZE, self._length))
            event = self._events[index]
            assert event is not None
        return event

    def _load(self, start: int, stop: int) -> None:
        """Parse the events start..stop that are not in memory yet."""
        if self._store is None or self._key is None:
            return
        missing = [i for i in range(start, stop) if self._events[i] is None]
        if not missing:
            return
        for index, data in self._store.read_events(self._key, missing[0], missing[-1] + 1):
            if self._events[index] is None:
                event = Event.model_validate_json(data)
                self._events[index] = event
                self._index_by_id[event.id] = index


def _user_text(event: Event) -> str | None:
    if isinstance(event, MessageEvent) and event.source == "user":
        return event.llm_message.text[:500] or None
    return None


def _duplicate(event_id: EventID, index: int) -> ValueError:
    return ValueError(
        f"Event with ID '{event_id}' already exists at index {index}: every event needs its "
        "own id (events are immutable; append a new one instead of re-adding it)."
    )


def _search_text(event: Event) -> str | None:
    """The text full-text search should find: messages and final answers."""
    if isinstance(event, MessageEvent):
        return event.llm_message.text or None
    if isinstance(event, ActionEvent) and event.tool_name == "finish" and event.action is not None:
        return str(getattr(event.action, "message", "")) or None
    return None
