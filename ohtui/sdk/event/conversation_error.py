"""ConversationErrorEvent: the run failed as a whole."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ohtui.sdk.event.base import Event
from ohtui.sdk.event.types import SourceType

if TYPE_CHECKING:
    from rich.text import Text


class ConversationErrorEvent(Event):
    """A conversation-level failure. The status becomes ERROR; the model does not see it."""

    source: SourceType = "environment"
    code: str
    detail: str

    @property
    def visualize(self) -> Text:
        """The error in red."""
        from rich.text import Text

        return Text(f"Conversation Error [{self.code}]: {self.detail}", style="bold red")
