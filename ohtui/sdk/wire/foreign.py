"""Stand-ins for what an OpenHands server sends that ohtui has no type for.

An event kind we lack (`InterruptEvent` before we had one, `ServerErrorEvent`,
`ACPToolCallEvent`...) becomes a `ForeignEvent`; an action or observation of a tool we do
not have (an MCP tool, a browser) becomes a `ForeignAction` / `ForeignObservation`. Each
keeps the original JSON and can be shown, so nothing the server said is silently lost.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import Field

from ohtui.sdk.event.base import Event
from ohtui.sdk.event.types import SourceType
from ohtui.sdk.tool.schema import Action, Observation

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


class ForeignAction(Action):
    """The arguments of a tool ohtui does not have, as the server validated them."""

    foreign_kind: str = Field(description="The action kind the server gave it.")
    data: dict[str, Any] = Field(default_factory=dict, description="Its fields.")

    @property
    def visualize(self) -> Text:
        """The kind, then the fields."""
        from rich.text import Text

        text = Text(f"{self.foreign_kind}\n", style="bold")
        for name, value in self.data.items():
            text.append(f"{name}: ", style="bold")
            text.append(f"{value}\n")
        return text


class ForeignObservation(Observation):
    """The result of a tool ohtui does not have: its content, and its original kind."""

    foreign_kind: str = Field(default="", description="The observation kind the server gave.")


def _words(name: str) -> str:
    """`ServerError` -> `Server error`."""
    out: list[str] = []
    for char in name:
        if char.isupper() and out:
            out.append(" ")
        out.append(char.lower() if out else char)
    return "".join(out) or "Event"
