"""RemoteEventsList: a remote conversation's events, mirrored from the server.

Filled by paging `events/search` (100 at a time), then kept current by the event socket.
The server's order wins: a re-sync (`reconcile`) takes the server's list as it is and keeps
after it only the events the socket delivered that the listing did not have yet. An event
id appears once, however often the socket and the listing both deliver it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, overload

from ohtui.sdk.conversation.event_store import EventsListBase
from ohtui.sdk.conversation.impl.paging import search_pages
from ohtui.sdk.event.base import Event
from ohtui.sdk.event.types import EventID
from ohtui.sdk.wire.events_in import event_from_wire
from ohtui.sdk.wire.extensions import EVENT_FIELDS_PARAM

if TYPE_CHECKING:
    from ohtui.sdk.workspace.remote import RemoteWorkspace

PAGE_LIMIT = 100


class RemoteEventsList(EventsListBase):
    """The events of a conversation on an agent server, in the server's order."""

    def __init__(self, workspace: RemoteWorkspace, conversation_id: str) -> None:
        """Read every event the server has (RemoteServerError if it cannot be read)."""
        self._workspace = workspace
        self._conversation_id = conversation_id
        self._lock = threading.RLock()
        self._events: list[Event] = []
        self._ids: dict[EventID, int] = {}
        self.reconcile()

    def fetch_all(self) -> list[Event]:
        """Every event on the server, paged in its order."""
        path = f"/api/conversations/{self._conversation_id}/events/search"
        items = search_pages(
            self._workspace, path, {EVENT_FIELDS_PARAM: "true"}, page_size=PAGE_LIMIT
        )
        return [event_from_wire(item) for item in items]

    def reconcile(self) -> list[Event]:
        """Re-read the server's list and merge it by id; return the events new to this list
        (in order), e.g. those emitted while the socket was down."""
        fetched = self.fetch_all()
        with self._lock:
            new = [e for e in fetched if e.id not in self._ids]
            # What only the socket gave (a server that does not keep per-field state updates
            # as history) stays right after the listed event it followed.
            listed = {e.id for e in fetched}
            following: dict[str | None, list[Event]] = {}
            anchor: str | None = None
            for event in self._events:
                if event.id in listed:
                    anchor = event.id
                else:
                    following.setdefault(anchor, []).append(event)
            merged = following.get(None, [])
            for event in fetched:
                merged.append(event)
                merged += following.get(event.id, [])
            self._events = merged
            self._ids = {e.id: i for i, e in enumerate(merged)}
            return new

    def add_event(self, event: Event) -> bool:
        """Add an event the socket delivered; False when it is here already."""
        with self._lock:
            if event.id in self._ids:
                return False
            self._ids[event.id] = len(self._events)
            self._events.append(event)
            return True

    def append(self, event: Event) -> None:
        """Add an event (a duplicate id is ignored: the server's copy is the same event)."""
        self.add_event(event)

    def __len__(self) -> int:
        return len(self._events)

    @overload
    def __getitem__(self, index: int) -> Event: ...

    @overload
    def __getitem__(self, index: slice) -> list[Event]: ...

    def __getitem__(self, index: int | slice) -> Event | list[Event]:
        with self._lock:
            return self._events[index]

    def __iter__(self) -> Iterator[Event]:
        with self._lock:
            snapshot = list(self._events)
        return iter(snapshot)

    def __reversed__(self) -> Iterator[Event]:
        with self._lock:
            snapshot = list(self._events)
        return reversed(snapshot)

    def get_index(self, event_id: EventID) -> int:
        """The index of the event with this id (KeyError if there is none)."""
        with self._lock:
            if event_id not in self._ids:
                raise KeyError(f"Unknown event_id: {event_id}")
            return self._ids[event_id]

    def get_id(self, idx: int) -> EventID:
        """The id of the event at `idx`."""
        return self[idx].id
