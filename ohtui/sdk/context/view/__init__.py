"""View: what the model sees of a conversation, with every condensation applied.

The event log is never changed. A `Condensation` event names the events the model no
longer sees and, optionally, a summary that stands in for them; replaying the log through
a View gives the same messages every time, so a resumed conversation sends what it would
have sent before the restart.
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Sequence
from dataclasses import dataclass, field
from typing import overload

from ohtui.sdk.context.view.events import LogBacked, ViewEvents, event_ids
from ohtui.sdk.event.base import Event, LLMConvertibleEvent
from ohtui.sdk.event.condenser import Condensation, CondensationRequest, CondensationSummaryEvent
from ohtui.sdk.event.llm_convertible.action import ActionEvent
from ohtui.sdk.event.llm_convertible.message import MessageEvent
from ohtui.sdk.event.llm_convertible.observation import ObservationBaseEvent
from ohtui.sdk.event.llm_convertible.system import SystemPromptEvent

__all__ = [
    "IncrementalView",
    "View",
    "ViewEvents",
    "apply_condensation",
    "event_ids",
    "summary_event_id",
]


def summary_event_id(condensation: Condensation) -> str:
    """The id of the summary a condensation puts in the view: derived from its own id, so
    a later condensation can forget it by id, before and after a restart alike."""
    return f"{condensation.id}:summary"


def apply_condensation(
    events: Sequence[LLMConvertibleEvent], condensation: Condensation
) -> Sequence[LLMConvertibleEvent]:
    """`events` without the forgotten ones, the summary (if any) at its offset (events
    held as log indexes stay so: none is read)."""
    forgotten = condensation.forgotten_event_ids
    kept: ViewEvents | list[LLMConvertibleEvent]
    if isinstance(events, ViewEvents):
        kept = events.without(forgotten)
    else:
        kept = [event for event in events if event.id not in forgotten]
    if condensation.summary is not None and condensation.summary_offset is not None:
        summary = CondensationSummaryEvent(
            id=summary_event_id(condensation),
            timestamp=condensation.timestamp,
            summary=condensation.summary,
        )
        offset = max(0, min(condensation.summary_offset, len(kept)))
        kept.insert(offset, summary)
    return kept


@dataclass
class View:
    """The LLM-convertible events the model sees, in order, condensations applied.

    `unhandled_condensation_request` is True when a `CondensationRequest` came after the
    last `Condensation` (`condensation_focus` then holds its focus, if it gave one).
    Indexing and `len` work as on the list of events. Built from a branch of a log (what a
    conversation's agent sees), `events` is a ViewEvents: the log's events are held as
    their indexes and read again (a page at a time) when looked at, so a view of thousands
    of events costs their ids, not the parsed events.
    """

    events: Sequence[LLMConvertibleEvent] = field(default_factory=list)
    unhandled_condensation_request: bool = False
    condensation_focus: str | None = None
    """What the newest unhandled request asks a summary to keep above all."""
    condensations: list[Condensation] = field(default_factory=list)
    _cuts: _CutScan | None = field(default=None, init=False, repr=False, compare=False)
    """The cut points found so far, kept as events are appended: a condenser asks for
    them several times a step, and each time would read every event of the log again."""

    def __len__(self) -> int:
        return len(self.events)

    @overload
    def __getitem__(self, key: int) -> LLMConvertibleEvent: ...

    @overload
    def __getitem__(self, key: slice) -> Sequence[LLMConvertibleEvent]: ...

    def __getitem__(self, key: int | slice) -> LLMConvertibleEvent | Sequence[LLMConvertibleEvent]:
        return self.events[key]

    def event_ids(self) -> list[str]:
        """The id of each event in the view, in order (none is read from the log)."""
        return event_ids(self.events)

    @property
    def most_recent_condensation(self) -> Condensation | None:
        """The last condensation applied, if any."""
        return self.condensations[-1] if self.condensations else None

    @property
    def summary_event(self) -> CondensationSummaryEvent | None:
        """The newest summary in the view, if any."""
        for event in reversed(self.events):
            if isinstance(event, CondensationSummaryEvent):
                return event
        return None

    def append_event(self, event: Event, log_index: int | None = None) -> None:
        """Take in one more event of the log, applying condensation semantics; with
        `log_index` (where the event is in the log the view's ViewEvents reads), the view
        holds that index instead of the event."""
        if isinstance(event, Condensation):
            self._cuts = None  # (found again over the shorter view when asked)
            self.events = apply_condensation(self.events, event)
            self.condensations.append(event)
            self.unhandled_condensation_request = False
            self.condensation_focus = None
        elif isinstance(event, CondensationRequest):
            self.unhandled_condensation_request = True
            self.condensation_focus = event.focus or self.condensation_focus
        elif isinstance(event, LLMConvertibleEvent):
            cuts = self._cuts
            if not self.events:
                cuts = self._cuts = None
            if isinstance(self.events, ViewEvents):
                self.events.add(event, log_index)
            else:
                if not isinstance(self.events, list):
                    self.events = list(self.events)
                self.events.append(event)
            if cuts is None and len(self.events) == 1:
                cuts = self._cuts = _CutScan(self.events)
            if cuts is not None and cuts.follows(self.events):
                cuts.feed(event)

    @classmethod
    def from_events(cls, events: Iterable[Event], skip: Container[str] = ()) -> View:
        """The view of a whole log; events whose id is in `skip` (blocked messages) are
        left out. From a branch of a log, the view holds its events as log indexes."""
        if isinstance(events, LogBacked) and isinstance(events, Sequence):
            return IncrementalView().update(events, skip)
        view = cls()
        for event in events:
            if event.id not in skip:
                view.append_event(event)
        return view

    @property
    def protected_prefix(self) -> int:
        """How many leading events are never forgotten: up to and including the first user
        message (the system prompt and the task)."""
        for index, event in enumerate(self.events):
            if isinstance(event, MessageEvent) and event.source == "user":
                return index + 1
        return sum(1 for e in self.events[:1] if isinstance(e, SystemPromptEvent))

    @property
    def manipulation_indices(self) -> list[int]:
        """The positions (0..len) where the view may be cut without separating a tool call
        from its result, or the calls of one response from each other."""
        cuts = self._cuts
        if cuts is None or not cuts.covers(self.events):
            cuts = self._cuts = _CutScan(self.events)
            for event in self.events:
                cuts.feed(event)
        return cuts.indices()

    def find_next_index(self, position: int) -> int:
        """The smallest manipulation index at or after `position`; the last one when none
        is (tool calls still waiting for their results are never cut into)."""
        indices = self.manipulation_indices
        for index in indices:
            if index >= position:
                return index
        return indices[-1]


class _CutScan:
    """The cut points of a View's events, found one event at a time (see
    `View.manipulation_indices`)."""

    def __init__(self, events: Sequence[LLMConvertibleEvent]) -> None:
        self._events = events
        self._seen = 0
        self._found = [0]
        self._open_calls: set[str] = set()
        self._batch: str | None = None

    def covers(self, events: Sequence[LLMConvertibleEvent]) -> bool:
        """Whether this scan has seen all of `events` (the same object, not grown since)."""
        return events is self._events and self._seen == len(events)

    def follows(self, events: Sequence[LLMConvertibleEvent]) -> bool:
        """Whether the last of `events` is the next one for this scan."""
        return events is self._events and self._seen == len(events) - 1

    def feed(self, event: LLMConvertibleEvent) -> None:
        """Take in the next event."""
        index = self._seen
        if (
            index
            and not self._open_calls
            and not (isinstance(event, ActionEvent) and event.llm_response_id == self._batch)
        ):
            self._found.append(index)
        if isinstance(event, ActionEvent):
            self._open_calls.add(event.tool_call_id)
            self._batch = event.llm_response_id
        else:
            self._batch = None
            if isinstance(event, ObservationBaseEvent):
                self._open_calls.discard(event.tool_call_id)
        self._seen += 1

    def indices(self) -> list[int]:
        """The cut points of the events seen (a copy)."""
        if self._seen and not self._open_calls:
            return [*self._found, self._seen]
        return list(self._found)


READ_PAGE = 256
"""Events an IncrementalView takes from the log at a time."""


class IncrementalView:
    """A View kept up to date with a growing branch of the log, reading each event once.

    A step costs the events added since the last one, however long the history is; when
    the branch is another one (HEAD moved), the view is built again from its root.
    """

    def __init__(self) -> None:
        self.view = View()
        self._seen = 0
        self._last_id: str | None = None
        self.generation = 0
        """Grows by one each time a condensation, or a move to another branch, changes the
        view (not on appends)."""

    def update(self, events: Sequence[Event], skip: Container[str] = ()) -> View:
        """Take in the events added since the last call; return the view."""
        total = len(events)
        if self._seen and (self._seen > total or events[self._seen - 1].id != self._last_id):
            self.view, self._seen = View(), 0  # another branch: start again from its root
            self.generation += 1
        source = events if isinstance(events, LogBacked) else None
        if source is not None and not self._seen and not self.view.events:
            self.view.events = ViewEvents(source.log)
        held = self.view.events
        # Held as log indexes only where the view reads that same log (else as events).
        pager = (
            source
            if source is not None and isinstance(held, ViewEvents) and held.log is source.log
            else None
        )
        while self._seen < total:
            # A page at a time: a resumed log is read once, without holding all of it.
            stop = min(self._seen + READ_PAGE, total)
            for position, event in enumerate(events[self._seen : stop], self._seen):
                if event.id in skip:
                    continue
                if isinstance(event, Condensation):
                    self.generation += 1
                index = pager.log_index(position) if pager is not None else None
                self.view.append_event(event, index)
            self._seen = stop
            self._last_id = events[stop - 1].id
        return self.view
