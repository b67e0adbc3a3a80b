"""EventLog: the conversation's append-only sequence of events, persisted or in memory."""

from __future__ import annotations

import logging
import threading
from abc import ABC, abstractmethod
from array import array
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from typing import Any, overload

from ohtui.sdk.conversation.store import LOCK_TIMEOUT_SECONDS, ConversationStore, StoredEvent
from ohtui.sdk.conversation.tree_index import ROOT, NotATreeError, TreeIndex
from ohtui.sdk.conversation.write_behind import WriteBehind
from ohtui.sdk.event.base import Event
from ohtui.sdk.event.llm_convertible.action import ActionEvent
from ohtui.sdk.event.llm_convertible.message import MessageEvent
from ohtui.sdk.event.types import ROOT_PARENT_ID, EventID

logger = logging.getLogger(__name__)

PAGE_SIZE = 256
CACHED_EVENTS = 4 * PAGE_SIZE
"""Events a stored log keeps in memory: the agent's condensed view and the screen's window
fit; older ones are read again, by page, when asked for."""


class EventsListBase(Sequence[Event], ABC):
    """A sequence of events that can be appended to (local or remote), indexed by id."""

    @abstractmethod
    def append(self, event: Event) -> None:
        """Add a new event to the end."""

    @abstractmethod
    def get_index(self, event_id: EventID) -> int:
        """The index of the event with this id, from the list's index (KeyError if none)."""

    def index_of(self, event_id: EventID) -> int:
        """Where the event with this id is in the list, looked up by id, never by a scan of
        the events (KeyError naming the id when the list has no such event). The SDK's
        `get_index` is the same lookup."""
        return self.get_index(event_id)

    def __contains__(self, item: object) -> bool:
        """Whether the list holds this event, or an event with this id (looked up by id)."""
        event_id = item.id if isinstance(item, Event) else item
        if not isinstance(event_id, str):
            return False
        try:
            self.get_index(event_id)
        except KeyError:
            return False
        return True

    # --- the conversation tree -------------------------------------------------------------

    def parent_index(self, index: int) -> int:
        """The index of the parent of the event at `index` (ROOT for a root): its
        `parent_id`, or for an event older than the tree the one listed before it."""
        parent_id = self[index].parent_id
        if parent_id == ROOT_PARENT_ID:
            return ROOT
        if parent_id is not None:
            return self.get_index(parent_id)
        return index - 1 if index > 0 else ROOT

    def branch_indexes(self, leaf_id: EventID | None, limit: int | None = None) -> array[int]:
        """The indexes of the events from the root to `leaf_id`, root first (the last
        `limit` of them with a limit); empty for None. KeyError for an unknown id;
        ValueError when the events do not form a tree (a parent listed after its child)."""
        chain: array[int] = array("q")
        if leaf_id is None:
            return chain
        index = self.get_index(leaf_id)
        while index != ROOT and (limit is None or len(chain) < limit):
            chain.append(index)
            parent = self.parent_index(index)
            if not ROOT <= parent < index:
                raise NotATreeError(self[index].id, parent)
            index = parent
        chain.reverse()
        return chain

    def path_to_root(self, leaf_id: EventID | None, limit: int | None = None) -> list[Event]:
        """The events of the branch ending at `leaf_id`, root first (the SDK's name; the last
        `limit` with a limit). KeyError for an unknown id."""
        return self.events_at(self.branch_indexes(leaf_id, limit))

    def _effective_parent_id(self, idx: int, event: Event | None = None) -> EventID | None:
        """The id of the parent of the event at `idx` (None for a root)."""
        parent = self.parent_index(idx)
        return None if parent == ROOT else self[parent].id

    def events_at(self, indexes: Sequence[int]) -> list[Event]:
        """The events at these indexes, in that order."""
        return [self[i] for i in indexes]

    def user_message_indexes(self) -> list[int]:
        """The indexes of the user's messages, in order."""
        return [i for i, e in enumerate(self) if isinstance(e, MessageEvent) and e.source == "user"]

    def user_messages(self) -> list[tuple[int, str, str, str]]:
        """(index, id, timestamp, text) of each of the user's messages, in order."""
        return [
            (i, e.id, e.timestamp, e.llm_message.text)
            for i, e in enumerate(self)
            if isinstance(e, MessageEvent) and e.source == "user"
        ]

    def kind_indexes(self, *kinds: str) -> list[int]:
        """The indexes of the events of these kinds (`Event.kind`), in order."""
        return [i for i, e in enumerate(self) if e.kind in kinds]


class EventLog(EventsListBase):
    """The events of one conversation, in order.

    With a store, `append` hands the event to a background writer (WriteBehind) that
    commits in order, grouping what waits into one disk sync; `flush()` waits until all of
    it is on disk (the conversation does so before an action with effects runs, for the
    user's messages and before saving its state). Events are read back lazily, a page at a
    time, when they are needed; only the `CACHED_EVENTS` most recently used stay in memory
    (the rest are read again from the store; those not written yet stay until they are),
    so a long conversation costs memory for what is being looked at, not for its length.
    Without a store, events live in memory only. Safe to use from several threads (and
    processes, through the store).
    """

    def __init__(
        self,
        store: ConversationStore | object | None = None,
        key: int | str | None = None,
        pending_state: Callable[[], tuple[str, dict[str, Any]] | None] | None = None,
    ) -> None:
        """`pending_state` returns unsaved conversation state to commit with the next event.

        `store` may also be an SDK FileStore (and `key` its folder, as in the SDK's
        `EventLog(file_store, dir_path)`): ohtui never writes events as files, so that log
        keeps its events in memory, and says so. A conversation persists its events through
        its `persistence_dir` (SQLite).
        """
        if store is not None and not isinstance(store, ConversationStore):
            logger.warning(
                "EventLog(%s): ohtui keeps this log in memory, it does not write events to a "
                "FileStore; give a conversation a persistence_dir to keep its events",
                type(store).__name__,
            )
            store = key = None
        if (store is None) != (key is None) or isinstance(key, str):
            raise ValueError("an EventLog needs both a store and a conversation key, or neither")
        self._store = store
        self._key = key
        self._pending_state = pending_state
        self._lock = threading.RLock()
        self._length = store.event_count(key) if store is not None and key is not None else 0
        self._cache: OrderedDict[int, Event] = OrderedDict()
        """Events by index: all of them without a store, the most recently used with one."""
        self._index_by_id: dict[EventID, int] = {}
        """The indexes of the events in `_cache`."""
        self._unwritten: dict[int, Event] = {}
        """Events handed to the writer and not on disk yet (read from here, not the store)."""
        self._unwritten_ids: dict[EventID, int] = {}
        self._writer = (
            WriteBehind(store, key, self._length) if store is not None and key is not None else None
        )
        self._tree: TreeIndex | None = None if store is not None else TreeIndex()
        """The parent of each event, read from the store when the tree is first asked
        about, then kept as events are appended."""

    @property
    def cached(self) -> int:
        """How many events are held in memory now."""
        return len(self._cache)

    def in_memory(self, index: int) -> bool:
        """Whether the event at `index` is held in memory now (not to be read again)."""
        return index in self._cache

    def __len__(self) -> int:
        return self._length

    @overload
    def __getitem__(self, index: int) -> Event: ...

    @overload
    def __getitem__(self, index: slice) -> list[Event]: ...

    def __getitem__(self, index: int | slice) -> Event | list[Event]:
        with self._lock:
            if isinstance(index, slice):
                return self._slice(range(*index.indices(self._length)))
            if index < 0:
                index += self._length
            if not 0 <= index < self._length:
                raise IndexError(_out_of_range(index, self._length))
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
            index = self._known_index(event_id)
            if index is None and self._store is not None and self._key is not None:
                index = self._store.event_index(self._key, event_id)
            if index is None:
                raise KeyError(f"Unknown event_id: {event_id}")
            return index

    def get_id(self, idx: int) -> EventID:
        """The id of the event at `idx` (negative indexes count from the end)."""
        return self[idx].id

    def append(self, event: Event, durable: bool = True, head: bool = False) -> None:
        """Append `event`; with a store, on disk when this returns, or with `durable` False
        handed to the background writer (on disk once `flush()` returns). With `head`, the
        store records it as the conversation's HEAD in the same write (the state's
        `append_event` does; an event appended here alone leaves HEAD where it was).

        Raises ValueError if an event with the same id is already in the log or its
        `parent_id` names no event in it, the writer's
        failure (PersistenceError, ConversationReadOnlyError, ...) if an earlier write
        failed, and TimeoutError if the log stays locked for LOCK_TIMEOUT_SECONDS.
        """
        if not self._lock.acquire(timeout=LOCK_TIMEOUT_SECONDS):
            raise TimeoutError(f"the event log stayed locked for {LOCK_TIMEOUT_SECONDS:g} s")
        try:
            existing = self._known_index(event.id)
            if existing is None and not durable:  # (a durable write finds it as it writes)
                existing = self._stored_index(event.id)
            if existing is not None:
                raise _duplicate(event.id, existing)
            index = self._length
            parent = self._stored_parent(event)
            if parent == index - 1:
                parent = None  # the event before: stored as NULL, no jump in the tree
            if self._writer is not None and self._store is not None:
                self._store.check_writable()
                stored = StoredEvent(
                    event.id,
                    event.kind,
                    event.model_dump_json(),
                    _search_text(event),
                    _user_text(event),
                    parent,
                    head,
                )
                state = self._pending_state() if self._pending_state else None
                if durable:
                    try:
                        index = self._writer.write(stored, state)
                    except ValueError:
                        existing = self._stored_index(event.id)
                        if existing is None:
                            raise
                        raise _duplicate(event.id, existing) from None
                else:
                    self._writer.put(stored, state)
                    self._unwritten[index] = event
                    self._unwritten_ids[event.id] = index
                self._forget_written()
            self._remember(index, event)
            self._length = max(self._length, index + 1)  # another process may have appended
            if self._tree is not None:
                if self._tree.length == index:
                    self._tree.add(index, _resolved(parent, index))
                else:  # another process appended too: read them again when needed
                    self._tree = None
        finally:
            self._lock.release()

    # --- the conversation tree -------------------------------------------------------------

    def _stored_parent(self, event: Event) -> int | None:
        """The parent index to store for `event` (None: the event before it, as of old)."""
        if event.parent_id is None:
            return None
        if event.parent_id == ROOT_PARENT_ID:
            return ROOT
        index = self._known_index(event.parent_id)
        if index is None:
            index = self._stored_index(event.parent_id)
        if index is None:
            raise ValueError(
                f"Parent event '{event.parent_id}' does not exist for event '{event.id}': "
                "a parent_id must name an event already in this conversation."
            )
        return index

    def parent_index(self, index: int) -> int:
        """The index of the parent of the event at `index` (ROOT for a root), from the
        tree's index (no event is read)."""
        with self._lock:
            if not 0 <= index < self._length:
                raise IndexError(_out_of_range(index, self._length))
            return self._tree_index().parent(index)

    def _tree_index(self) -> TreeIndex:
        tree = self._tree
        if tree is None or tree.length < self._length:
            if self._store is not None and self._key is not None:
                self.flush()  # the events written behind are read with the rest
                length = self._store.event_count(self._key)
                tree = TreeIndex(length, self._store.parent_jumps(self._key))
                self._length = max(self._length, length)
            else:
                tree = TreeIndex(self._length)
            self._tree = tree
        return tree

    def branch_indexes(self, leaf_id: EventID | None, limit: int | None = None) -> array[int]:
        """See EventsListBase.branch_indexes: here from the tree's index, no event read but
        the leaf's (a run of consecutive events at a time)."""
        if leaf_id is None:
            return array("q")
        with self._lock:
            return self._tree_index().branch(self.get_index(leaf_id), limit, self.get_id)

    def children(self, index: int) -> list[int]:
        """The indexes of the events whose parent is the event at `index`, oldest first."""
        with self._lock:
            return self._tree_index().children(index)

    def events_at(self, indexes: Sequence[int]) -> list[Event]:
        """The events at these indexes, in that order (read from the store a run at a time)."""
        with self._lock:
            return self._slice(indexes)

    def user_message_indexes(self) -> list[int]:
        """The indexes of the user's messages, in order (from the store's rows: no event of
        a long conversation is read for it)."""
        if self._store is None or self._key is None:
            return super().user_message_indexes()
        with self._lock:
            self.flush()
            return self._store.user_message_indexes(self._key)

    def user_messages(self) -> list[tuple[int, str, str, str]]:
        """(index, id, timestamp, text) of each of the user's messages (from the store's
        rows, no event parsed)."""
        if self._store is None or self._key is None:
            return super().user_messages()
        with self._lock:
            self.flush()
            return self._store.user_messages(self._key)

    def kind_indexes(self, *kinds: str) -> list[int]:
        """The indexes of the events of these kinds, in order (from the store's rows: a
        conversation's checkpoints are found without parsing its log)."""
        if self._store is None or self._key is None:
            return super().kind_indexes(*kinds)
        with self._lock:
            self.flush()
            return self._store.kind_indexes(self._key, kinds)

    def flush(self, timeout: float | None = None) -> None:
        """Wait until every event appended so far is on disk (at once without a store).

        Raises the writer's failure, or TimeoutError after `timeout` seconds."""
        if self._writer is not None:
            self._writer.flush(timeout)

    def _stored_index(self, event_id: EventID) -> int | None:
        if self._store is None or self._key is None:
            return None
        return self._store.event_index(self._key, event_id)

    def _known_index(self, event_id: EventID) -> int | None:
        index = self._index_by_id.get(event_id)
        return self._unwritten_ids.get(event_id) if index is None else index

    def _forget_written(self) -> None:
        """Drop what the writer has put on disk since from `_unwritten`."""
        assert self._writer is not None
        written = self._writer.written
        while self._unwritten:
            index = next(iter(self._unwritten))
            if index >= written:
                break
            event = self._unwritten.pop(index)
            self._unwritten_ids.pop(event.id, None)

    def _get(self, index: int) -> Event:
        event = self._cache.get(index)
        if event is not None:
            if self._store is not None:
                self._cache.move_to_end(index)
            return event
        event = self._unwritten.get(index)
        if event is not None:
            return event
        start = index - index % PAGE_SIZE
        return self._read(start, min(start + PAGE_SIZE, self._length))[index]

    def _slice(self, positions: Sequence[int]) -> list[Event]:
        found: dict[int, Event] = {}
        missing: list[int] = []
        for index in positions:
            event = self._cache.get(index) or self._unwritten.get(index)
            if event is None:
                missing.append(index)
            else:
                found[index] = event
        for start, stop in _runs(sorted(set(missing))):
            found.update(self._read(start, stop))
        return [found[index] for index in positions]

    def _read(self, start: int, stop: int) -> dict[int, Event]:
        """Parse the events start..stop from the store (keeping the newest-used in memory)."""
        events: dict[int, Event] = {}
        if self._store is None or self._key is None:
            return events
        for index, data in self._store.read_events(self._key, start, stop):
            event = self._cache.get(index)
            if event is None:
                event = Event.model_validate_json(data)
            events[index] = event
            self._remember(index, event)
        return events

    def _remember(self, index: int, event: Event) -> None:
        self._cache[index] = event
        self._index_by_id[event.id] = index
        if self._store is None:
            return
        self._cache.move_to_end(index)
        while len(self._cache) > CACHED_EVENTS:
            old_index, old = self._cache.popitem(last=False)
            if self._index_by_id.get(old.id) == old_index:
                del self._index_by_id[old.id]


def _resolved(parent: int | None, index: int) -> int:
    """A stored parent as an index: None is the event before (a root at index 0)."""
    if parent is None:
        return index - 1 if index > 0 else ROOT
    return parent


def _runs(indexes: list[int]) -> Iterator[tuple[int, int]]:
    """Sorted indexes as (start, stop) runs, a gap of more than a page starting a new run."""
    if not indexes:
        return
    start = previous = indexes[0]
    for index in indexes[1:]:
        if index - previous > PAGE_SIZE:
            yield start, previous + 1
            start = index
        previous = index
    yield start, previous + 1


def _user_text(event: Event) -> str | None:
    if isinstance(event, MessageEvent) and event.source == "user":
        return event.llm_message.text[:500] or None
    return None


def _out_of_range(index: int, length: int) -> str:
    return f"Event index out of range: {index} (the log holds {length} events)"


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
