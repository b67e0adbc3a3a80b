"""Event and LLMConvertibleEvent: the immutable records a conversation is made of."""

from __future__ import annotations

import uuid
from abc import ABC, abstractmethod
from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from pydantic import ConfigDict, Field
from rich.text import Text

from ohtui.sdk.event.types import EventID, SourceType
from ohtui.sdk.llm.message import Message
from ohtui.sdk.utils.models import DiscriminatedUnionMixin

if TYPE_CHECKING:
    from ohtui.sdk.event.llm_convertible.action import ActionEvent


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

    @property
    def visualize(self) -> Text:
        """A rich rendering of this event; subclasses give a specific one."""
        text = Text(f"{type(self).__name__}", style="bold")
        fields = self.model_dump(exclude={"id", "timestamp", "source", "kind"})
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

    @staticmethod
    def events_to_messages(events: Iterable[Event]) -> list[Message]:
        """Convert a history to chat messages.

        Events that are not LLM-convertible are skipped. ActionEvents that share an
        `llm_response_id` (one response with several tool calls) become one assistant
        message whose tool calls follow their order; its thought and reasoning come from
        the first action of the batch.
        """
        from ohtui.sdk.event.llm_convertible.action import ActionEvent

        convertible = [e for e in events if isinstance(e, LLMConvertibleEvent)]
        batches: dict[str, list[ActionEvent]] = {}
        for event in convertible:
            if isinstance(event, ActionEvent):
                batches.setdefault(event.llm_response_id, []).append(event)
        messages: list[Message] = []
        for event in convertible:
            if isinstance(event, ActionEvent):
                batch = batches.pop(event.llm_response_id, None)
                if batch is not None:  # None: already emitted with the first of its batch
                    messages.append(action_batch_to_message(batch))
            else:
                messages.append(event.to_llm_message())
        return messages


def action_batch_to_message(batch: list[ActionEvent]) -> Message:
    """One assistant message carrying every tool call of a batch."""
    first = batch[0]
    return Message(
        role="assistant",
        content=list(first.thought),
        tool_calls=[a.tool_call for a in batch],
        reasoning_content=first.reasoning_content,
        thinking_blocks=list(first.thinking_blocks),
        responses_reasoning_item=first.responses_reasoning_item,
    )
