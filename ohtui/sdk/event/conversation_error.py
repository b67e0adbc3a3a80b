"""ConversationErrorEvent: the run failed as a whole."""

from __future__ import annotations

from rich.text import Text

from ohtui.sdk.event.base import Event
from ohtui.sdk.event.types import SourceType


class ConversationErrorEvent(Event):
    """A conversation-level failure. The status becomes ERROR; the model does not see it."""

    source: SourceType = "environment"
    code: str
    detail: str

    @property
    def visualize(self) -> Text:
        """The error in red."""
        return Text(f"Conversation Error [{self.code}]: {self.detail}", style="bold red")
