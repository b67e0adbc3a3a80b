"""PauseEvent: the user paused the agent."""

from __future__ import annotations

from rich.text import Text

from ohtui.sdk.event.base import Event
from ohtui.sdk.event.types import SourceType


class PauseEvent(Event):
    """The user asked the agent to pause; it stops between steps."""

    source: SourceType = "user"

    @property
    def visualize(self) -> Text:
        """A quiet one-liner."""
        return Text("Conversation Paused by the user", style="yellow")
