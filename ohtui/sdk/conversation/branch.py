"""Branch: one path through a conversation's tree, root first, read from its log on demand.

A conversation's log keeps every event ever appended, on every branch; its HEAD
(`leaf_event_id`) picks the branch that is the conversation now (`state.active_branch()`):
what the agent remembers, what the screen shows, what runs next. A branch holds only the
indexes of its events in the log, so a 10,000-event branch costs 80 KB until its events are
read, a page at a time, as they are looked at.

A Branch never changes once made: the conversation extends its branch by making a longer
one over the same index array (`extended`), so a reader holding a Branch while the agent
appends (another thread) sees the events it was given, no more.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Iterator, Sequence
from typing import overload

from ohtui.sdk.event.base import Event
from ohtui.sdk.event.types import EventID

PAGE = 256


class Branch(Sequence[Event]):
    """The events at the first `length` of `indexes` of `log` (all of them without a
    length), in that order (a view: nothing is copied)."""

    def __init__(
        self, log: Sequence[Event], indexes: array[int], length: int | None = None
    ) -> None:
        self._log = log
        self._indexes = indexes
        self._length = len(indexes) if length is None else length

    @property
    def indexes(self) -> array[int]:
        """The log index of each event of the branch, root first (a copy of its own)."""
        return self._indexes[: self._length]

    @property
    def leaf_id(self) -> EventID | None:
        """The id of the branch's last event (None for an empty branch)."""
        return self._log[self._indexes[self._length - 1]].id if self._length else None

    def log_index(self, position: int) -> int:
        """The log index of the event at `position` of the branch."""
        return self._indexes[range(self._length)[position]]

    def last(self, count: int) -> Branch:
        """Its last `count` events (all of them when it has no more)."""
        if count >= self._length:
            return self
        return Branch(self._log, self._indexes[self._length - max(count, 0) : self._length])

    def extended(self, log_index: int) -> Branch:
        """This branch with the event at `log_index` of the log after its leaf (O(1) when
        no longer branch was made from this one; else the indexes are copied once)."""
        indexes = self._indexes
        if len(indexes) != self._length:  # another extension took the array: copy
            indexes = indexes[: self._length]
        indexes.append(log_index)
        return Branch(self._log, indexes, self._length + 1)

    def position_of(self, event_id: EventID) -> int | None:
        """Where the event with this id is on the branch; None when it is not on it."""
        get_index = getattr(self._log, "get_index", None)
        if get_index is None:
            return next((i for i, e in enumerate(self) if e.id == event_id), None)
        try:
            index = get_index(event_id)
        except KeyError:
            return None
        return _bisect(self._indexes, index, self._length)

    def __len__(self) -> int:
        return self._length

    @overload
    def __getitem__(self, position: int) -> Event: ...

    @overload
    def __getitem__(self, position: slice) -> list[Event]: ...

    def __getitem__(self, position: int | slice) -> Event | list[Event]:
        if isinstance(position, slice):
            return self._read([self._indexes[i] for i in range(self._length)[position]])
        return self._log[self.log_index(position)]

    def __iter__(self) -> Iterator[Event]:
        for start in range(0, self._length, PAGE):
            yield from self._read(self._indexes[start : min(start + PAGE, self._length)])

    def __reversed__(self) -> Iterator[Event]:
        stop = self._length
        while stop > 0:
            start = max(0, stop - PAGE)
            yield from reversed(self._read(self._indexes[start:stop]))
            stop = start

    def __contains__(self, item: object) -> bool:
        event_id = item.id if isinstance(item, Event) else item
        return isinstance(event_id, str) and self.position_of(event_id) is not None

    def _read(self, indexes: Sequence[int]) -> list[Event]:
        events_at = getattr(self._log, "events_at", None)
        if events_at is not None:
            return list(events_at(indexes))
        return [self._log[i] for i in indexes]


def _bisect(indexes: array[int], index: int, length: int) -> int | None:
    """The position of `index` in the first `length` of the ascending `indexes`, or None."""
    position = bisect_left(indexes, index, 0, length)
    return position if position < length and indexes[position] == index else None
