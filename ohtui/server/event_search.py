"""`events/search` and `events/count`: a conversation's events as OpenHands JSON, filtered
and paged by event id, as the OpenHands server pages them."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ohtui.sdk.conversation.event_store import EventsListBase
from ohtui.sdk.event.base import Event
from ohtui.sdk.wire.events_out import event_to_wire
from ohtui.sdk.wire.extensions import EVENT_FIELDS_PARAM

MAX_LIMIT = 100
SORT_ORDERS = ("TIMESTAMP", "TIMESTAMP_DESC")


class QueryError(ValueError):
    """A bad query parameter; the message names it."""


@dataclass(frozen=True)
class EventQuery:
    """The filters of events/search and events/count (read from the query parameters by
    `ohtui.server.requests.EventSearchRequest`)."""

    kind: str | None = None
    source: str | None = None
    body: str | None = None
    gte: datetime | None = None
    lt: datetime | None = None
    descending: bool = False
    ohtui_fields: bool = False
    """Events keep ohtui's own fields (the client asked: see wire.extensions)."""

    def matches(self, event: Event, frame: dict[str, Any]) -> bool:
        """Whether the event passes every filter."""
        if self.kind is not None and event.kind != self.kind:
            return False
        if self.source is not None and event.source != self.source:
            return False
        if self.body is not None and self.body.lower() not in _text_of(frame).lower():
            return False
        if self.gte is not None or self.lt is not None:
            at = naive(datetime.fromisoformat(event.timestamp))
            if self.gte is not None and at < self.gte:
                return False
            if self.lt is not None and at >= self.lt:
                return False
        return True

    def frames(self, events: Sequence[Event], start: int | None = None) -> Iterator[dict[str, Any]]:
        """Matching events as wire frames, in the asked order from index `start` (default:
        the first in that order); kinds that are not sent are left out."""
        last = len(events) - 1
        if self.descending:
            indices: range = range(last if start is None else start, -1, -1)
        else:
            indices = range(0 if start is None else start, last + 1)
        for index in indices:
            event = events[index]
            frame = event_to_wire(event, ohtui_fields=self.ohtui_fields)
            if frame is not None and self.matches(event, frame):
                yield frame


def search(
    events: Sequence[Event], query: EventQuery, page_id: str | None, limit: int
) -> dict[str, Any]:
    """`{"items": [...], "next_page_id": id or None}`; the page starts at event `page_id`
    (found by id, so a page costs its own size, not the history before it)."""
    start = None if page_id is None else _index_of(events, page_id)
    if start is None and page_id is not None:
        return {"items": [], "next_page_id": None}
    items: list[dict[str, Any]] = []
    for frame in query.frames(events, start):
        if len(items) == limit:
            return {"items": items, "next_page_id": frame["id"]}
        items.append(frame)
    return {"items": items, "next_page_id": None}


def _index_of(events: Sequence[Event], event_id: str) -> int | None:
    if isinstance(events, EventsListBase):  # a lookup in the store's index
        try:
            return events.index_of(event_id)
        except KeyError:
            return None
    return next((n for n, event in enumerate(events) if event.id == event_id), None)


def count(events: Sequence[Event], query: EventQuery) -> int:
    """How many events match."""
    return sum(1 for _ in query.frames(events))


def wants_ohtui_fields(params: Mapping[str, str]) -> bool:
    """Whether the query asks for ohtui's own event fields."""
    return params.get(EVENT_FIELDS_PARAM, "").lower() == "true"


def parse_limit(value: str | None) -> int:
    """`limit`: 1..100 (default 100); QueryError otherwise."""
    if value is None:
        return MAX_LIMIT
    try:
        limit = int(value)
    except ValueError as exc:
        raise QueryError(f"limit must be an integer from 1 to {MAX_LIMIT}") from exc
    if not 1 <= limit <= MAX_LIMIT:
        raise QueryError(f"limit must be from 1 to {MAX_LIMIT}, not {limit}")
    return limit


def naive(at: datetime) -> datetime:
    """Local naive time (OpenHands sends naive local times; ours carry an offset)."""
    return at.astimezone().replace(tzinfo=None) if at.tzinfo is not None else at


def _text_of(frame: dict[str, Any]) -> str:
    """The text a body filter looks in: message content, thoughts, observations."""
    parts: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            text = value.get("text")
            if isinstance(text, str):
                parts.append(text)
            for key, item in value.items():
                if key != "text":
                    walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    for key in ("llm_message", "thought", "observation", "action", "extended_content"):
        walk(frame.get(key))
    return "\n".join(parts)
