"""ConversationStateUpdateEvent: a change of a ConversationState field."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import Field, field_validator

from ohtui.sdk.event.base import Event
from ohtui.sdk.event.types import SourceType

if TYPE_CHECKING:
    from rich.text import Text

    from ohtui.sdk.conversation.state import ConversationState

FULL_STATE_KEY = "full_state"


class ConversationStateUpdateEvent(Event):
    """A state field changed (`key`, and its JSON-ready `value`).

    These go to callbacks so front ends stay in sync; they are not stored in the event
    log because the state itself is stored.
    """

    source: SourceType = "environment"
    key: str = Field(description="The state field that changed, or 'full_state'.")
    value: Any = Field(default=None, description="Its new value, as JSON-ready data.")

    @field_validator("key")
    @classmethod
    def validate_key(cls, key: str) -> str:
        """Keys must be non-empty."""
        if not key:
            raise ValueError("a state update needs a key")
        return key

    @field_validator("value")
    @classmethod
    def validate_value(cls, value: Any) -> Any:
        """Values are stored as they come; pydantic models are dumped to JSON-ready data."""
        dump = getattr(value, "model_dump", None)
        return dump(mode="json") if callable(dump) else value

    @classmethod
    def from_conversation_state(cls, state: ConversationState) -> ConversationStateUpdateEvent:
        """A snapshot of the whole state (without events)."""
        return cls(key=FULL_STATE_KEY, value=state.model_dump(mode="json", exclude={"agent"}))

    @property
    def visualize(self) -> Text:
        """A quiet one-liner."""
        from rich.text import Text

        return Text(f"State: {self.key} = {str(self.value)[:80]}", style="dim")
