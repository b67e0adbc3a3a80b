"""PauseEvent: the user paused the agent."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ohtui.sdk.event.base import Event
from ohtui.sdk.event.types import SourceType

if TYPE_CHECKING:
    from rich.text import Text


class PauseEvent(Event):
    """The user asked the agent to pause; it stops between steps."""

    source: SourceType = "user"

    @property
    def visualize(self) -> Text:
        """A quiet one-liner."""
        from rich.text import Text

        return Text("Conversation Paused by the user", style="yellow")


class InterruptEvent(Event):
    """The user interrupted the agent mid-step (recorded by `ohtui serve`, as OpenHands does);
    the run ends paused, like after a PauseEvent."""

    source: SourceType = "user"

    @property
    def visualize(self) -> Text:
        """A quiet one-liner."""
        from rich.text import Text

        return Text("Conversation Interrupted by the user", style="yellow")
