"""HookExecutionEvent: a hook blocked something, failed, or timed out."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import Field

from ohtui.sdk.event.base import Event
from ohtui.sdk.event.types import SourceType

if TYPE_CHECKING:
    from rich.text import Text


class HookExecutionEvent(Event):
    """The outcome of a hook worth recording: a block, an error or a timeout."""

    source: SourceType = "environment"
    hook_event_name: str = Field(description="PreToolUse, Stop, ... ")
    command: str
    tool_name: str | None = None
    exit_code: int | None = None
    blocked: bool = False
    reason: str | None = Field(default=None, description="Why it blocked, in its own words.")
    error: str | None = Field(default=None, description="What went wrong running it.")

    @property
    def visualize(self) -> Text:
        """A one-liner: yellow for a block, red for a failure."""
        from rich.text import Text

        if self.error:
            return Text(
                f"Hook {self.hook_event_name} `{self.command}` failed: {self.error}", style="red"
            )
        reason = self.reason or "no reason given"
        return Text(
            f"Hook {self.hook_event_name} `{self.command}` blocked: {reason}", style="yellow"
        )
