"""Event and LLMConvertibleEvent: the immutable records a conversation is made of.

A package of its own below the concrete events (`event.llm_convertible` and the modules of
`event`), which build on it: `ohtui.sdk.event` re-exports them all.
"""

from __future__ import annotations

import uuid
from abc import ABC, abstractmethod
from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from pydantic import ConfigDict, Field, field_validator

from ohtui.sdk.event.base.types import ROOT_PARENT_ID, EventID, SourceType
from ohtui.sdk.llm.message import Message
from ohtui.sdk.utils.models import DiscriminatedUnionMixin

if TYPE_CHECKING:
    from rich.text import Text


def _now() -> str:
    return datetime.now().astimezone().isoformat()


def _new_id() -> str:
    return str(uuid.uuid4())


class Event(DiscriminatedUnionMixin, ABC):
    """Base class for all events: an id, a timestamp, and who produced it."""

    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")

    id: EventID = Field(default_factory=_new_id, description="Unique event id.")
    timestamp: str = Field(default_factory=_now, description="ISO 8601 time of creation.")
    source: SourceType = Field(description="Who produced the event.")
    parent_id: EventID | None = Field(
        default=None,
        description="The event before this one on its branch of the conversation tree (events "
        "sharing a parent are sibling branches); None: a root, or an event older than the "
        "tree, whose parent is the one logged before it.",
    )

    @field_validator("id")
    @classmethod
    def _not_the_root_marker(cls, value: EventID) -> EventID:
        if value == ROOT_PARENT_ID:
            raise ValueError(f"an event id may not be {ROOT_PARENT_ID!r}: it marks a root")
        return value

    @property
    def visualize(self) -> Text:
        """A rich rendering of this event; subclasses give a specific one."""
        from rich.text import Text

        text = Text(f"Unknown event type: {type(self).__name__}", style="bold")
        fields = self.model_dump(exclude={"id", "timestamp", "source", "kind", "parent_id"})
        for name, value in fields.items():
            text.append(f"\n{name}: ", style="bold")
            text.append(_short(value))
        return text

    def __str__(self) -> str:
        return f"{type(self).__name__} ({self.source}): {self.visualize.plain[:200]}"


def _short(value: Any, limit: int = 500) -> str:
    text = str(value)
    return text if len(text) <= limit else text[:limit] + "…"


class LLMConvertibleEvent(Event, ABC):
    """An event the model sees, as one chat message."""

    @abstractmethod
    def to_llm_message(self) -> Message:
        """This event as a chat message."""

    def llm_batch_id(self) -> str | None:
        """The id this event shares with the others of its chat message; None: its own message.

        An LLM response with several tool calls is one assistant message: its actions share
        the response's id.
        """
        return None

    def batch_to_llm_message(self, batch: list[LLMConvertibleEvent]) -> Message:
        """The one chat message of `batch`: this event and those sharing its batch id."""
        return self.to_llm_message()

    @staticmethod
    def events_to_messages(events: Iterable[Event]) -> list[Message]:
        """Convert a history to chat messages.

        Events that are not LLM-convertible are skipped. Events that share a batch id (the
        ActionEvents of one response with several tool calls) become one message, built by
        the first of them (for actions: one assistant message whose tool calls follow their
        order, its thought and reasoning from the first action; AssertionError if a later
        one has a thought: the history is corrupt). Consecutive plain user messages (a
        summary, injected context, the user's own) become one user turn, their content in
        order.
        """
        convertible = [e for e in events if isinstance(e, LLMConvertibleEvent)]
        batches: dict[str, list[LLMConvertibleEvent]] = {}
        for event in convertible:
            batch_id = event.llm_batch_id()
            if batch_id is not None:
                batches.setdefault(batch_id, []).append(event)
        messages: list[Message] = []
        for event in convertible:
            batch_id = event.llm_batch_id()
            if batch_id is not None:
                batch = batches.pop(batch_id, None)
                if batch is None:  # already emitted with the first of its batch
                    continue
                message = event.batch_to_llm_message(batch)
            else:
                message = event.to_llm_message()
            if messages and _plain_user(messages[-1]) and _plain_user(message):
                merged = [*messages[-1].content, *message.content]
                messages[-1] = messages[-1].model_copy(update={"content": merged})
            else:
                messages.append(message)
        return messages


def _plain_user(message: Message) -> bool:
    """A user turn that answers no tool call and names no one: safe to join with another."""
    return (
        message.role == "user"
        and message.tool_calls is None
        and message.tool_call_id is None
        and message.name is None
    )
