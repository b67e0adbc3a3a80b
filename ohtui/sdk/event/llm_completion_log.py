"""LLMCompletionLogEvent: a raw completion log, for debugging."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ohtui.sdk.event.base import Event
from ohtui.sdk.event.types import SourceType

if TYPE_CHECKING:
    from rich.text import Text


class LLMCompletionLogEvent(Event):
    """The request and response of one LLM call, serialized."""

    source: SourceType = "environment"
    filename: str
    log_data: str
    model_name: str = "unknown"
    usage_id: str = "default"

    @property
    def visualize(self) -> Text:
        """A quiet one-liner."""
        from rich.text import Text

        return Text(f"LLM completion log {self.filename} ({self.model_name})", style="dim")
