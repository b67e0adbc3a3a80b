"""MarkedOptionList draws each line as Textual's OptionList does, behind the mark column.

It draws its lines itself (looking up what they share once per render): these tests compare
every line with OptionList's own `render_line` on the same widget, so a Textual change that
makes them part ways fails here.
"""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult
from textual.geometry import Region
from textual.strip import Strip
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from ohtui.tui.widgets.marked import HIGHLIGHT_MARK, MarkedOptionList

pytestmark = pytest.mark.anyio

MARK = len(HIGHLIGHT_MARK)


class Host(App[None]):
    def compose(self) -> ComposeResult:
        yield MarkedOptionList(
            Option("first\n  its second line", id="a"),
            None,
            Option("disabled", id="b", disabled=True),
            Option("third", id="c"),
            *(Option(f"more {i}", id=f"m{i}") for i in range(20)),
        )


def segments(strip: Strip) -> list[tuple[str, object]]:
    return [(segment.text, segment.style) for segment in strip]


def assert_as_option_list_draws(options: MarkedOptionList) -> None:
    """Every line in view: the mark column, then exactly what OptionList draws there."""
    width = options.scrollable_content_region.width
    height = options.scrollable_content_region.height
    lines = options.render_lines(Region(0, 0, width, height))
    assert len(lines) == height
    for y in range(height):
        line_number = options.scroll_offset.y + y
        own = options.render_line(y)
        assert own.cell_length == width, y
        if line_number >= len(options._lines):
            assert own.text.strip() == "", y  # below the options: blank
            continue
        index, offset = options._lines[line_number]
        marked = index == options.highlighted and offset == 0
        expected_mark = HIGHLIGHT_MARK if marked else " " * MARK
        assert own.text[:MARK] == expected_mark, y
        assert segments(own.crop(MARK)) == segments(OptionList.render_line(options, y)), y


async def test_lines_are_drawn_as_the_option_list_draws_them() -> None:
    app = Host()
    async with app.run_test(size=(40, 12)) as pilot:
        options = app.query_one(MarkedOptionList)
        options.focus()
        await pilot.pause()
        assert options.highlighted == 0
        assert_as_option_list_draws(options)
        text = [options.render_line(y).text for y in range(4)]
        assert text[0].startswith(HIGHLIGHT_MARK + "first")
        assert text[1].startswith(" " * MARK + "  its second line")  # no mark on line two
        assert set(text[2][MARK:].strip()) == {"─"}  # the separator

        await pilot.press("down")  # past the disabled option
        assert options.highlighted == 2
        assert_as_option_list_draws(options)
        assert options.render_line(4).text.startswith(HIGHLIGHT_MARK + "third")

        options._mouse_hovering_over = 5
        assert_as_option_list_draws(options)

        options.scroll_to(y=10, animate=False, immediate=True)
        await pilot.pause()
        assert options.scroll_offset.y == 10
        assert_as_option_list_draws(options)

        options.clear_options()
        await pilot.pause()
        assert_as_option_list_draws(options)
