"""Events of history condensation: the request, the result and its summary."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import Field

from ohtui.sdk.event.base import Event, LLMConvertibleEvent
from ohtui.sdk.event.types import EventID, SourceType
from ohtui.sdk.llm.message import Message, TextContent
from ohtui.sdk.utils.text import plural

if TYPE_CHECKING:
    from rich.text import Text


class Condensation(Event):
    """Some events are forgotten from the model's view, optionally replaced by a summary."""

    source: SourceType = "environment"
    forgotten_event_ids: set[EventID] = Field(default_factory=set)
    summary: str | None = None
    summary_offset: int | None = Field(
        default=None, description="Where in the kept view the summary goes."
    )
    llm_response_id: str = ""

    @property
    def forgotten_event_count(self) -> int:
        """How many events were forgotten."""
        return len(self.forgotten_event_ids)

    @property
    def visualize(self) -> Text:
        """A quiet one-liner."""
        from rich.text import Text

        text = Text(
            f"Condensed history: {plural(len(self.forgotten_event_ids), 'event')} forgotten",
            style="dim",
        )
        if self.summary:
            text.append(f"\nSummary: {self.summary}", style="dim")
        return text


class CondensationRequest(Event):
    """Asks the condenser to condense the history at the next step."""

    source: SourceType = "environment"
    focus: str | None = Field(
        default=None, description="What the summary should keep above all (the user's words)."
    )

    @property
    def action(self) -> str:
        """The action type, `condensation_request`."""
        return "condensation_request"

    @property
    def visualize(self) -> Text:
        """What was asked, and why, dimmed."""
        from rich.text import Text

        text = Text("Conversation Condensation Requested\n", style="bold")
        text.append(
            "The next step starts with a condensation of the conversation history, to make "
            "room in the model's context.",
            style="dim",
        )
        if self.focus:
            text.append(f"\nFocus: {self.focus}", style="dim")
        return text


class CondensationSummaryEvent(LLMConvertibleEvent):
    """The summary that stands in for forgotten events in the model's view."""

    source: SourceType = "environment"
    summary: str

    @property
    def visualize(self) -> Text:
        """The summary, dimmed."""
        from rich.text import Text

        return Text(f"Summary of earlier events: {self.summary}", style="dim")

    def to_llm_message(self) -> Message:
        """The summary, as a user message."""
        return Message(role="user", content=[TextContent(text=self.summary)])
