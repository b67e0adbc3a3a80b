"""MarkedOptionList: an option list whose highlighted option shows as a mark, not only a colour
(NO_COLOR, monochrome). The radio button, select and switch that do the same are in
`marked_choices` (the chat's first frame needs only this list)."""

from __future__ import annotations

from rich.segment import Segment
from textual.geometry import Region
from textual.strip import Strip
from textual.style import Style as VisualStyle
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from ohtui.tui.screen_reader import reading_aloud

HIGHLIGHT_MARK = "\N{HEAVY RIGHT-POINTING ANGLE QUOTATION MARK ORNAMENT} "
"""Drawn before the highlighted option of a MarkedOptionList."""
SPOKEN_HIGHLIGHT_MARK = "> "
"""The same in screen-reader mode: a character a screen reader says plainly."""


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
