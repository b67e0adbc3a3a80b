"""ForeignEvent: the stand-in for an event an OpenHands server sends that ohtui has no type for.

An event kind we lack (`InterruptEvent` before we had one, `ServerErrorEvent`,
`ACPToolCallEvent`...) becomes a `ForeignEvent` (made by the wire decoder,
`ohtui.sdk.wire.events_in`); it keeps the original JSON and can be shown like any other
event, so nothing the server said is silently lost.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import Field

from ohtui.sdk.event.base import Event
from ohtui.sdk.event.types import SourceType

if TYPE_CHECKING:
    from rich.text import Text

_SHOWN_FIELDS = ("detail", "message", "reason", "code", "error", "content", "text")
"""Fields whose value says best what a foreign event was about, in that order."""


class ForeignEvent(Event):
    """An event of a kind ohtui does not know, as the server sent it."""

    source: SourceType = "environment"
    foreign_kind: str = Field(description="The kind the server gave it.")
    data: dict[str, Any] = Field(default_factory=dict, description="Its other fields.")

    @property
    def summary(self) -> str:
        """One line: the kind in words and its most telling field."""
        words = _words(self.foreign_kind.removesuffix("Event"))
        for name in _SHOWN_FIELDS:
            value = self.data.get(name)
            if isinstance(value, str) and value.strip():
                return f"{words}: {value.strip().splitlines()[0][:200]}"
        return words

    @property
    def visualize(self) -> Text:
        """A quiet one-liner."""
        from rich.text import Text

        return Text(self.summary, style="dim")


def _words(name: str) -> str:
    """`ServerError` -> `Server error`."""
    out: list[str] = []
    for char in name:
        if char.isupper() and out:
            out.append(" ")
        out.append(char.lower() if out else char)
    return "".join(out) or "Event"
