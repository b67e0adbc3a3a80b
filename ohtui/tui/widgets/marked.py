"""Choice widgets whose selection shows as a mark, not only a colour (NO_COLOR, monochrome)."""

from __future__ import annotations

from collections.abc import Hashable
from typing import TypeVar

from rich.segment import Segment
from textual.app import ComposeResult, RenderResult
from textual.content import Content
from textual.geometry import Size
from textual.strip import Strip
from textual.widgets import OptionList, RadioButton, Select, Switch
from textual.widgets._select import SelectCurrent, SelectOverlay

T = TypeVar("T", bound=Hashable)

HIGHLIGHT_MARK = "\N{HEAVY RIGHT-POINTING ANGLE QUOTATION MARK ORNAMENT} "
"""Drawn before the highlighted option of a MarkedOptionList."""


class MarkedRadioButton(RadioButton):
    """A radio button drawn `●` when on and `○` when off, so the choice reads without colour."""

    BUTTON_INNER = "○"

    def watch_value(self) -> None:
        """Swap the glyph, then let the button do the rest."""
        self.BUTTON_INNER = "●" if self.value else "○"
        super().watch_value()


class MarkedOptionList(OptionList):
    """An option list that marks the highlighted option with HIGHLIGHT_MARK, not only colour."""

    def _get_left_gutter_width(self) -> int:
        # The option list renders its options this much narrower, leaving room for the mark.
        return len(HIGHLIGHT_MARK)

    def render_line(self, y: int) -> Strip:
        """The option's line with the mark column in front."""
        strip = super().render_line(y)
        try:
            index, offset = self._lines[self.scroll_offset.y + y]
        except IndexError:
            return strip  # below the options: a blank line as wide as the list
        marked = index == self.highlighted and offset == 0
        if marked:
            style = self.get_visual_style("option-list--option", "option-list--option-highlighted")
        else:
            style = self.get_visual_style("option-list--option")
        text = HIGHLIGHT_MARK if marked else " " * len(HIGHLIGHT_MARK)
        mark = Strip([Segment(text, style.rich_style)], len(text))
        return Strip.join([mark, strip])


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
    """A switch that says `● on` / `○ off` when there is no colour to show its slider."""

    def render(self) -> RenderResult:
        """The slider in colour, the words without."""
        if not self.app.no_color:
            return super().render()
        return Content.styled("● on " if self.value else "○ off", "bold" if self.value else "")

    def get_content_width(self, container: Size, viewport: Size) -> int:
        """Room for the words without colour."""
        return 5 if self.app.no_color else super().get_content_width(container, viewport)
