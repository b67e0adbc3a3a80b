"""What listings show of a saved conversation."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True, slots=True)
class ConversationSummary:
    """What the picker shows for one saved conversation."""

    id: str
    title: str | None
    first_user_message: str | None
    created_at: datetime
    updated_at: datetime
    event_count: int
    status: str | None
    workspace: str | None
    model: str | None


@dataclass(frozen=True, slots=True)
class SearchHit:
    """A conversation whose messages match a search, with a highlighted snippet."""

    summary: ConversationSummary
    snippet: str
