"""ViewEvents: a View's events held as where to read them in the log, not as objects.

A View of a 10,000-event branch held every event parsed: ~32 MB for the model's view of a
resumed conversation (the log itself keeps only a bounded page cache). Events never change
and the log is append-only, so an event of the log is held as its log index and id, and
read again from the log (a page at a time) when it is looked at; an event that is not in
the log (a condensation's summary) is held as itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Protocol, cast, overload, runtime_checkable

from ohtui.sdk.event.base import Event, LLMConvertibleEvent
from ohtui.sdk.utils.pages import in_pages, in_pages_reversed


@runtime_checkable
class LogBacked(Protocol):
    """A sequence of events that are a log's events (a Branch): where each one is in it."""

    @property
    def log(self) -> Sequence[Event]:
        """The append-only log the events are read from."""
        ...

    def log_index(self, position: int) -> int:
        """The log index of the event at `position`."""
        ...


def event_ids(events: Sequence[Event]) -> list[str]:
    """The id of each of `events`, without reading them again where they are held as ids."""
    if isinstance(events, ViewEvents):
        return list(events.ids)
    return [event.id for event in events]


class ViewEvents(Sequence[LLMConvertibleEvent]):
    """The events of a View, in order: each a log index (read again on use) or an event.

    Compares equal to any sequence of the same events, and slices into another
    ViewEvents, so code written for the list it replaces keeps working.
    """

    __slots__ = ("_entries", "_ids", "_log")

    def __init__(self, log: Sequence[Event]) -> None:
        self._log = log
        self._entries: list[int | LLMConvertibleEvent] = []
        self._ids: list[str] = []

    @property
    def log(self) -> Sequence[Event]:
        """The log the events held as indexes are read from."""
        return self._log

    @classmethod
    def _of(
        cls, log: Sequence[Event], entries: list[int | LLMConvertibleEvent], ids: list[str]
    ) -> ViewEvents:
        made = cls(log)
        made._entries, made._ids = entries, ids
        return made

    def add(self, event: LLMConvertibleEvent, log_index: int | None) -> None:
        """Add `event` at the end, held as `log_index` when it is the log's event there."""
        self._entries.append(event if log_index is None else log_index)
        self._ids.append(event.id)

    def insert(self, position: int, event: LLMConvertibleEvent) -> None:
        """Put `event` (one not in the log, held as itself) at `position`."""
        self._entries.insert(position, event)
        self._ids.insert(position, event.id)

    def without(self, forgotten: Iterable[str]) -> ViewEvents:
        """A copy without the events whose id is in `forgotten` (no event is read)."""
        gone = set(forgotten)
        kept = [i for i, event_id in enumerate(self._ids) if event_id not in gone]
        return ViewEvents._of(
            self._log, [self._entries[i] for i in kept], [self._ids[i] for i in kept]
        )

    @property
    def ids(self) -> list[str]:
        """The id of each event, in order (no event is read)."""
        return self._ids

    @property
    def held(self) -> int:
        """How many events are held as objects (the rest are read from the log on use)."""
        return sum(1 for entry in self._entries if not isinstance(entry, int))

    def __len__(self) -> int:
        return len(self._entries)

    @overload
    def __getitem__(self, key: int) -> LLMConvertibleEvent: ...

    @overload
    def __getitem__(self, key: slice) -> ViewEvents: ...

    def __getitem__(self, key: int | slice) -> LLMConvertibleEvent | ViewEvents:
        if isinstance(key, slice):
            return ViewEvents._of(self._log, self._entries[key], self._ids[key])
        entry = self._entries[key]
        return self._read([entry])[0] if isinstance(entry, int) else entry

    def __iter__(self) -> Iterator[LLMConvertibleEvent]:
        return in_pages(self._read, self._entries)

    def __reversed__(self) -> Iterator[LLMConvertibleEvent]:
        return in_pages_reversed(self._read, self._entries)

    def __contains__(self, item: object) -> bool:
        return isinstance(item, Event) and item.id in self._ids

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]  # mutable, like the list it stands for

    def __repr__(self) -> str:
        return f"ViewEvents({len(self)} events, {self.held} held)"

    def _read(self, entries: Sequence[int | LLMConvertibleEvent]) -> list[LLMConvertibleEvent]:
        """The events of `entries`, the log's read together (a run of pages at a time)."""
        indexes = [entry for entry in entries if isinstance(entry, int)]
        if not indexes:
            return cast(list[LLMConvertibleEvent], list(entries))
        events_at = getattr(self._log, "events_at", None)
        read = events_at(indexes) if events_at is not None else [self._log[i] for i in indexes]
        found = iter(read)
        return [
            cast(LLMConvertibleEvent, next(found)) if isinstance(entry, int) else entry
            for entry in entries
        ]
