"""Screen-reader mode for the TUI: the one switch every widget reads, and text made plain.

The app turns the mode on before its first frame (`--screen-reader`, OHTUI_SCREEN_READER,
`[ui] screen_reader`): it puts SCREEN_READER_CLASS on itself, loads `screen_reader.tcss`
(no borders, no scrollbars) and turns animation off. Widgets ask `reading_aloud(self)` and
then draw plain lines, each starting with its role ("agent: …"), with words for what
glyphs, box drawing and colour say elsewhere. Cheap to import: no engine, no Rich Markdown.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Sequence

from rich.console import Console, RenderableType
from rich.segment import Segment
from rich.text import Text
from textual._context import NoActiveAppError
from textual.color import Color
from textual.content import Content
from textual.dom import DOMNode
from textual.filter import LineFilter

SCREEN_READER_CLASS = "-screen-reader"
"""The class the app carries in screen-reader mode (stylesheets may select on it too)."""

Part = tuple[str, str]
"""(role, text): one piece of what a widget says, e.g. ("command", "ls -la")."""

_BOX_DRAWING = re.compile("[\u2500-\u259f\u2800-\u28ff]")
"""Box drawing, block elements and braille (spinner frames): shapes, not words."""
GLYPH_WORDS: dict[str, str] = {
    "✓": "ok",
    "✔": "ok",
    "✗": "failed",
    "✘": "failed",
    "☑": "done:",
    "◐": "in progress:",
    "☐": "to do:",
    "⚠": "warning:",
    "⇱": "outside the sandbox",
    "↑↓": "up/down",
    "↑": "up",
    "↓": "down",
    "❯": "",
    "●": "",
    "○": "",
    "⏸": "",
    "⏹": "",
    "↪": "",
    "✦": "",
    "⎇": "",
    "⋯": "",
    "↶": "",
    "⚙": "",
    "✎": "",
    "☰": "",
    "⇄": "",
}
"""Our own glyphs as words (or nothing, where the words beside them say it all)."""
_GLYPHS = re.compile("|".join(re.escape(glyph) for glyph in sorted(GLYPH_WORDS, key=len)[::-1]))


def reading_aloud(node: DOMNode) -> bool:
    """Whether the app `node` belongs to is in screen-reader mode (False before it has one)."""
    try:
        return node.app.has_class(SCREEN_READER_CLASS)
    except NoActiveAppError:  # a widget drawn outside an app: the normal look
        return False


def without_shapes(text: str) -> str:
    """`text` with box drawing, block elements and braille made spaces, lines stripped at
    the end (what others wrote: the model's text, a command's output)."""
    shapes = _BOX_DRAWING.sub(" ", text)
    return "\n".join(line.rstrip() for line in shapes.splitlines())


def speakable(text: str) -> str:
    """Our own text for a screen reader: glyphs as words (or dropped), " · " as a comma,
    no shapes, no doubled spaces."""
    text = _GLYPHS.sub(lambda match: GLYPH_WORDS[match.group()], text)
    text = text.replace(" · ", ", ").replace("·", "")
    lines = [
        re.sub(r"(?<=\S) {2,}", " ", line).strip() for line in without_shapes(text).split("\n")
    ]
    return "\n".join(lines).strip("\n")


def spoken_key(shown: str) -> str:
    """A key as Textual shows it ("^c", "↑") in words a screen reader says ("ctrl+c", "up")."""
    return speakable(re.sub(r"\^(?=\S)", "ctrl+", shown))


def plain_text(renderable: RenderableType | Content, width: int = 100) -> str:
    """What a renderable shows, as plain text: Content and Text as they are, anything else
    (Markdown, a Group) drawn by Rich at `width` without colour."""
    if isinstance(renderable, Content | Text):
        return renderable.plain
    if isinstance(renderable, str):
        return renderable
    console = Console(width=max(20, width), no_color=True, color_system=None, record=True)
    with console.capture() as capture:
        console.print(renderable)
    return capture.get()


def spoken_lines(parts: Sequence[Part]) -> list[str]:
    """The lines of `parts`: each starts "role: ", its further lines are indented by two
    spaces (the text's own common indentation removed), and none ends in spaces."""
    lines: list[str] = []
    for role, text in parts:
        rows = textwrap.dedent(text.strip("\n")).splitlines() or [""]
        lines.append(f"{role}: {rows[0]}".rstrip() if role else rows[0].rstrip())
        lines.extend(f"  {row}".rstrip() if row.strip() else "" for row in rows[1:])
    return lines


def spoken_content(parts: Sequence[Part]) -> Content:
    """`parts` as plain lines, each role in bold (a look only: the word says it)."""
    rows: list[Content] = []
    for line in spoken_lines(parts):
        role, colon, rest = line.partition(": ")
        if colon and line[:1] != " " and role in KNOWN_ROLES:
            rows.append(Content.assemble((f"{role}:", "bold"), " ", rest))
        else:
            rows.append(Content(line))
    return Content("\n").join(rows)


KNOWN_ROLES = frozenset(
    {
        "you",
        "agent",
        "thinking",
        "command",
        "edit",
        "tool",
        "output",
        "result",
        "needs approval",
        "error",
        "warning",
        "note",
        "status",
    }
)
"""The roles a line may start with; a widget of another kind may say its own."""


class NoShapes(LineFilter):
    """Screen-reader mode's last word on every painted line: box drawing, block elements and
    braille become spaces (one cell each, so every line keeps its width), whatever widget
    drew them: a screen of another feature, a Rich table, a scrollbar."""

    def apply(self, segments: list[Segment], background: Color) -> list[Segment]:
        """The segments without shapes (the same list when there are none)."""
        if not any(_BOX_DRAWING.search(segment.text) for segment in segments):
            return segments
        return [
            segment
            if segment.control
            else Segment(_BOX_DRAWING.sub(" ", segment.text), segment.style, segment.control)
            for segment in segments
        ]
