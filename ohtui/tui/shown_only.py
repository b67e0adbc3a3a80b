"""ShownOnly: the last filter on every line the TUI paints, so no text in it drives the terminal.

Rich and Textual take only BEL, backspace, VT, FF and CR out of the text they are given: an
escape sequence in what the model wrote or a command printed reached the terminal as it was
(measured in tmux: a model's OSC 0 set the terminal's title, its SGR coloured the text, a
command's OSC swallowed the rest of its line). Every widget's lines go through the app's line
filters just before they are written out; this one leaves only the characters a terminal
shows as themselves (ohtui.terminal_text's allowlist). The others take no cells in Rich's
measure, so they are dropped and each line keeps its width; one that takes cells becomes as
many spaces.
"""

from __future__ import annotations

from rich.cells import get_character_cell_size
from rich.segment import Segment
from textual.color import Color
from textual.filter import LineFilter

from ohtui.terminal_text import is_shown


class ShownOnly(LineFilter):
    """Drops every character a terminal would act on from the painted lines."""

    def apply(self, segments: list[Segment], background: Color) -> list[Segment]:
        """The segments with their text made safe (the same list when it already is)."""
        if all(segment.text.isprintable() or segment.control for segment in segments):
            return segments
        return [_shown(segment) for segment in segments]


def _shown(segment: Segment) -> Segment:
    text, style, control = segment
    if control or text.isprintable():
        return segment
    kept = "".join(c if is_shown(c) else " " * get_character_cell_size(c) for c in text)
    return Segment(kept, style, control)
