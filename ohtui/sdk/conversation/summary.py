"""What listings show of a saved conversation."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from ohtui.sdk.conversation.lease import LeaseHolder

if TYPE_CHECKING:
    from ohtui.sdk.event.base import Event


@dataclass(frozen=True, slots=True)
class ConversationSummary:
    """What the picker shows for one saved conversation."""

    id: str
    title: str | None
    first_user_message: str | None
    created_at: datetime
    updated_at: datetime
    event_count: int
    """How many events it has; -1 where that is not known (listed by an agent server)."""
    status: str | None
    workspace: str | None
    model: str | None
    held_by: LeaseHolder | None = None
    """Who has the conversation open now (None: nobody)."""
    forked_from: str | None = None
    """The conversation this one was forked from (its id, hex), None if not a fork."""
    forked_at: str | None = None
    """The event of the parent it was forked at (None: at the parent's HEAD, or not a fork)."""


@dataclass(frozen=True, slots=True)
class SearchHit:
    """A conversation whose messages match a search, with a highlighted snippet."""

    summary: ConversationSummary
    snippet: str


PageCursor = tuple[float, str]
"""Where a listing page ends: the (updated_at, id) of its last row, for keyset paging."""


@dataclass(frozen=True, slots=True)
class SummaryPage:
    """One page of a listing or search, newest first."""

    rows: list[ConversationSummary]
    snippets: dict[str, str]
    """By conversation id, for a search: the best-matching passage, matched words in [ ]."""
    next: PageCursor | None
    """Where the next page starts (None: this is the last)."""


@dataclass(frozen=True, slots=True)
class EventPage:
    """A run of a saved conversation's events, oldest first."""

    events: list[Event]
    start: int
    """The index of the first one: as many earlier events are not in this page."""
    total: int
    """How many events the conversation has in all."""
