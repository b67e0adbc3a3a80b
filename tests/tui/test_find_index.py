"""The transcript index: hits in screen order (a result's in its action's cell), numbered
without one entry per occurrence, and the marks drawn on a rendered line."""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip

from ohtui.tui.widgets.find_index import FindIndex, Hit
from ohtui.tui.widgets.find_marks import mark_strip


def test_a_result_is_found_in_its_actions_cell_and_hits_are_numbered_in_order() -> None:
    index = FindIndex()
    index.add(5, "Needle needle", call="c1")  # the action
    index.add(9, "another NEEDLE")
    index.add(6, "output: needle", answers="c1")  # its result, shown in the action's cell
    index.add(2, "nothing here")
    matches = index.matches("needle")
    assert len(matches) == 4
    assert [matches.hit(n) for n in range(4)] == [
        Hit(5, 5, 0),
        Hit(5, 5, 1),
        Hit(5, 6, 0),
        Hit(9, 9, 0),
    ]
    assert matches.number(Hit(5, 6, 0)) == 2
    assert matches.number(Hit(5, 6, 1)) is None  # no second hit in that result
    assert matches.last_at_or_before(8) == 2  # the last hit above position 8
    assert matches.last_at_or_before(1) == 0  # none above: the first
    assert matches.first_in(9) == 3
    assert len(index.matches("")) == 0


def test_the_newer_reading_of_an_event_wins() -> None:
    index = FindIndex()
    index.add(1, "one needle")
    index.add(1, "no more")
    assert len(index.matches("needle")) == 0


def test_marks_split_segments_and_keep_wide_characters_in_place() -> None:
    line = Strip([Segment("日本 Nee", Style(bold=True)), Segment("dle ok needle")])
    marked = mark_strip(line, "needle")
    assert marked.text == line.text and marked.cell_length == line.cell_length
    reversed_text = "".join(s.text for s in marked if s.style is not None and s.style.reverse)
    assert reversed_text == "Needleneedle"
    bold_mark = next(s for s in marked if s.text == "Nee")
    assert bold_mark.style is not None and bold_mark.style.bold and bold_mark.style.reverse
    current = mark_strip(line, "needle", current=True)
    assert all(s.style.underline for s in current if s.style is not None and s.style.reverse)
    assert mark_strip(line, "absent") is line
