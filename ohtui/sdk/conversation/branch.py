"""Branch: one path through a conversation's tree, root first, read from its log on demand.

A conversation's log keeps every event ever appended, on every branch; its HEAD
(`leaf_event_id`) picks the branch that is the conversation now (`state.active_branch()`):
what the agent remembers, what the screen shows, what runs next. A branch holds only the
indexes of its events in the log, so a 10,000-event branch costs 80 KB until its events are
read, a page at a time, as they are looked at.

The active branch is live, as the log is: while appends continue it (the agent's step
records events into the branch it was given), it grows with them (`grow`); once HEAD moves
elsewhere it no longer changes.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from typing import overload

from ohtui.sdk.event.base import Event
from ohtui.sdk.event.types import EventID
from ohtui.sdk.utils.pages import in_pages, in_pages_reversed


class Branch(Sequence[Event]):
    """The events at `indexes` of `log`, in that order (a view: nothing is copied)."""

    def __init__(self, log: Sequence[Event], indexes: array[int]) -> None:
        self._log = log
        self._indexes = indexes

    @property
    def log(self) -> Sequence[Event]:
        """The whole log the branch runs through."""
        return self._log

    @property
    def indexes(self) -> array[int]:
        """The log index of each event of the branch, root first."""
        return self._indexes

    @property
    def leaf_id(self) -> EventID | None:
        """The id of the branch's last event (None for an empty branch)."""
        return self._log[self._indexes[-1]].id if self._indexes else None

    def log_index(self, position: int) -> int:
        """The log index of the event at `position` of the branch."""
        return self._indexes[position]

    def grow(self, log_index: int) -> None:
        """Add the event at `log_index` of the log after the branch's leaf (its child)."""
        self._indexes.append(log_index)

    def last(self, count: int) -> Branch:
        """Its last `count` events (itself when it has no more), as a branch of their own."""
        if count >= len(self._indexes):
            return self
        return Branch(self._log, self._indexes[len(self._indexes) - max(count, 0) :])

    def position_of(self, event_id: EventID) -> int | None:
        """Where the event with this id is on the branch; None when it is not on it."""
        get_index = getattr(self._log, "get_index", None)
        if get_index is None:
            return next((i for i, e in enumerate(self) if e.id == event_id), None)
        try:
            index = get_index(event_id)
        except KeyError:
            return None
        return _bisect(self._indexes, index)

    def __len__(self) -> int:
        return len(self._indexes)

    @overload
    def __getitem__(self, position: int) -> Event: ...

    @overload
    def __getitem__(self, position: slice) -> list[Event]: ...

    def __getitem__(self, position: int | slice) -> Event | list[Event]:
        if isinstance(position, slice):
            return self._read(self._indexes[position])
        return self._log[self._indexes[position]]

    def __iter__(self) -> Iterator[Event]:
        return in_pages(self._read, self._indexes)

    def __reversed__(self) -> Iterator[Event]:
        return in_pages_reversed(self._read, self._indexes)

    def __contains__(self, item: object) -> bool:
        event_id = item.id if isinstance(item, Event) else item
        return isinstance(event_id, str) and self.position_of(event_id) is not None

    def _read(self, indexes: Sequence[int]) -> list[Event]:
        events_at = getattr(self._log, "events_at", None)
        if events_at is not None:
            return list(events_at(indexes))
        return [self._log[i] for i in indexes]


def _bisect(indexes: array[int], index: int) -> int | None:
    """The position of `index` in the ascending `indexes`, or None."""
    low, high = 0, len(indexes)
    while low < high:
        middle = (low + high) // 2
        if indexes[middle] < index:
            low = middle + 1
        else:
            high = middle
    return low if low < len(indexes) and indexes[low] == index else None
