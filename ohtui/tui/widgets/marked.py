"""Choice widgets whose selection shows as a mark, not only a colour (NO_COLOR, monochrome)."""

from __future__ import annotations

from collections.abc import Hashable
from typing import TypeVar

from rich.segment import Segment
from textual.app import ComposeResult, RenderResult
from textual.content import Content
from textual.geometry import Region, Size
from textual.strip import Strip
from textual.style import Style as VisualStyle
from textual.widgets import OptionList, RadioButton, Select, Switch
from textual.widgets._select import SelectCurrent, SelectOverlay
from textual.widgets.option_list import Option

from ohtui.tui.screen_reader import reading_aloud

T = TypeVar("T", bound=Hashable)

HIGHLIGHT_MARK = "\N{HEAVY RIGHT-POINTING ANGLE QUOTATION MARK ORNAMENT} "
"""Drawn before the highlighted option of a MarkedOptionList."""
SPOKEN_HIGHLIGHT_MARK = "> "
"""The same in screen-reader mode: a character a screen reader says plainly."""


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


class _Render:
    """What every line of one render of a MarkedOptionList shares, looked up once: Textual's
    OptionList looks the line map, the width and the styles up again for each line (a quarter
    to a half of the CPU time of drawing a screenful of the picker's rows)."""

    def __init__(self, options: MarkedOptionList) -> None:
        self.options = options
        self.lines = options._lines
        self.top = options.scroll_offset.y
        self.highlighted = options.highlighted
        self.hovered = options._mouse_hovering_over
        self.width = options.scrollable_content_region.width
        self._styles: dict[str, VisualStyle] = {}
        self._strips: dict[tuple[int, str], list[Strip]] = {}
        self._marks: dict[bool, Strip] = {}
        self._mark = SPOKEN_HIGHLIGHT_MARK if reading_aloud(options) else HIGHLIGHT_MARK

    def style(self, component: str) -> VisualStyle:
        """The option style, with `component` (an option state's class) on top if any."""
        style = self._styles.get(component)
        if style is None:
            names = ("option-list--option", component) if component else ("option-list--option",)
            style = self._styles[component] = self.options.get_visual_style(*names)
        return style

    def strips(self, index: int, option: Option, component: str) -> list[Strip]:
        """The option's lines drawn in the style of its state (from OptionList's cache)."""
        key = (index, component)
        strips = self._strips.get(key)
        if strips is None:
            strips = self._strips[key] = self.options._get_option_render(
                option, self.style(component)
            )
        return strips

    def mark(self, marked: bool) -> Strip:
        """The mark column: the mark, or blank."""
        strip = self._marks.get(marked)
        if strip is None:
            style = self.style("option-list--option-highlighted" if marked else "")
            text = self._mark if marked else " " * len(self._mark)
            strip = self._marks[marked] = Strip([Segment(text, style.rich_style)], len(text))
        return strip


class MarkedOptionList(OptionList):
    """An option list that marks the highlighted option with HIGHLIGHT_MARK, not only colour."""

    _drawing: _Render | None = None

    def _get_left_gutter_width(self) -> int:
        # The option list renders its options this much narrower, leaving room for the mark.
        return len(HIGHLIGHT_MARK)

    def render_lines(self, crop: Region) -> list[Strip]:
        """The lines in view, what they share looked up once for all of them."""
        self._update_lines()
        self._drawing = _Render(self)
        try:
            return super().render_lines(crop)
        finally:
            self._drawing = None

    def render_line(self, y: int) -> Strip:
        """The option's line with the mark column in front (as OptionList draws it)."""
        render = self._drawing or _Render(self)
        try:
            index, offset = render.lines[render.top + y]
            option = self.options[index]
        except IndexError:  # below the options: a blank line as wide as the list
            return Strip.blank(render.width, render.style("").rich_style)
        if option.disabled:
            component = "option-list--option-disabled"
        elif index == render.highlighted:
            component = "option-list--option-highlighted"
        elif index == render.hovered:
            component = "option-list--option-hover"
        else:
            component = ""
        strips = render.strips(index, option, component)
        if offset >= len(strips):
            return Strip.blank(render.width, render.style("").rich_style)
        return Strip.join(
            [render.mark(index == render.highlighted and offset == 0), strips[offset]]
        )


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
