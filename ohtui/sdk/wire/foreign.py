"""Stand-ins for what an OpenHands server sends that ohtui has no type for.

An event kind we lack (`InterruptEvent` before we had one, `ServerErrorEvent`,
`ACPToolCallEvent`...) becomes a `ForeignEvent`; an action or observation of a tool we do
not have (an MCP tool, a browser) becomes a `ForeignAction` / `ForeignObservation`. Each
keeps the original JSON and can be shown, so nothing the server said is silently lost.
ForeignEvent is an event type (`ohtui.sdk.event.foreign`), shown by front ends as any other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import Field

from ohtui.sdk.event.foreign import ForeignEvent
from ohtui.sdk.tool.schema import Action, Observation

if TYPE_CHECKING:
    from rich.text import Text

__all__ = ["ForeignAction", "ForeignEvent", "ForeignObservation"]


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
