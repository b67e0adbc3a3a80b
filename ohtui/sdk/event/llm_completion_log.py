"""LLMCompletionLogEvent: a raw completion log, for debugging."""

from __future__ import annotations

from rich.text import Text

from ohtui.sdk.event.base import Event
from ohtui.sdk.event.types import SourceType


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
        return Text(f"LLM completion log {self.filename} ({self.model_name})", style="dim")
