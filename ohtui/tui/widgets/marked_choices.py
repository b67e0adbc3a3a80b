"""Choice widgets whose state shows as a mark or in words, not only a colour (NO_COLOR,
monochrome): a radio button, a select whose drop-down is a MarkedOptionList, a switch."""

from __future__ import annotations

from collections.abc import Hashable
from typing import TypeVar

from textual.app import ComposeResult, RenderResult
from textual.content import Content
from textual.geometry import Size
from textual.widgets import RadioButton, Select, Switch
from textual.widgets._select import SelectCurrent, SelectOverlay

from ohtui.tui.screen_reader import reading_aloud
from ohtui.tui.widgets.marked import MarkedOptionList

T = TypeVar("T", bound=Hashable)


class MarkedRadioButton(RadioButton):
    """A radio button drawn `●` when on and `○` when off, so the choice reads without colour."""

    BUTTON_INNER = "○"

    def on_mount(self) -> None:
        """Screen-reader mode: "(x)" and "( )", without half blocks around them."""
        if reading_aloud(self):
            self.BUTTON_LEFT, self.BUTTON_RIGHT = "(", ")"
            self.BUTTON_INNER = "x" if self.value else " "
            self.refresh()  # (not watch_value: a RadioSet takes its message as a press)

    def watch_value(self) -> None:
        """Swap the glyph, then let the button do the rest."""
        if reading_aloud(self):
            self.BUTTON_INNER = "x" if self.value else " "
        else:
            self.BUTTON_INNER = "●" if self.value else "○"
        super().watch_value()


class MarkedSelectOverlay(SelectOverlay, MarkedOptionList):
    """A Select's drop-down list, its highlighted option marked."""


class MarkedSelect(Select[T]):
    """A Select whose drop-down marks the highlighted option."""

    def compose(self) -> ComposeResult:
        """The current value and the marked drop-down (Select's own parts otherwise)."""
        yield SelectCurrent(self.prompt)
        yield MarkedSelectOverlay(type_to_search=self._type_to_search).data_bind(
            compact=Select.compact
        )


class MarkedSwitch(Switch):
    """A switch that says `● on` / `○ off` when there is no colour to show its slider (and
    `on` / `off` in screen-reader mode)."""

    def render(self) -> RenderResult:
        """The slider in colour, the words without."""
        if reading_aloud(self):
            return Content.styled("on " if self.value else "off", "bold" if self.value else "")
        if not self.app.no_color:
            return super().render()
        return Content.styled("● on " if self.value else "○ off", "bold" if self.value else "")

    def _in_words(self) -> bool:
        return self.app.no_color or reading_aloud(self)

    def get_content_width(self, container: Size, viewport: Size) -> int:
        """Room for the words without colour."""
        return 5 if self._in_words() else super().get_content_width(container, viewport)
