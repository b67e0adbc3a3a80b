"""One cell per thing that happened in the conversation (the cell factory makes them from
engine events; the cells themselves know nothing of the engine).

Cells are cheap single widgets that render Content or a Rich renderable, so thousands of
events never mean thousands of heavy widgets. Every cell can take focus (Tab / arrow keys
in the view), expand or collapse its body, and copy its text.

In screen-reader mode every cell, of any subclass, is drawn as plain lines that start with
its role (`ROLE`, e.g. "agent: …"): a subclass's own `render` is wrapped to draw
`spoken()` instead, whose default reads the text out of what `render` shows. A cell with
more than one part, or text it shows better its own way, overrides `spoken_parts`.
"""

from __future__ import annotations

import functools
import re
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, cast

from rich.console import Group, RenderableType
from rich.markdown import Markdown
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.geometry import Region
from textual.message import Message
from textual.reactive import reactive
from textual.visual import visualize
from textual.widget import Widget

from ohtui.tui.display import clip_lines, more_lines
from ohtui.tui.markdown_text import markdown_content
from ohtui.tui.screen_reader import (
    Part,
    plain_text,
    reading_aloud,
    speakable,
    spoken_content,
    without_shapes,
)
from ohtui.tui.widgets.conversation_view import ConversationView
from ohtui.tui.widgets.find_marks import mark_strip
from ohtui.tui.widgets.stream_visual import Block, FinishedBlocks, GrowingVisual

if TYPE_CHECKING:
    from textual.css.styles import RulesMap
    from textual.geometry import Size
    from textual.strip import Strip

COLLAPSED_LINES = 6
"""Lines of a tool's output shown until the cell is expanded."""
USER_LINES = 12
"""Lines of a long user message (a pasted log) shown until the cell is expanded."""
STREAM_RESERVE_FRACTION = 0.25
"""A response being written holds blank rows under its text, growing in steps of this share
of the view's height: the screen is laid out and scrolls once a step, not once a line."""


RenderFunction = Callable[["Cell"], Any]


def _spoken_or(drawn: RenderFunction) -> RenderFunction:
    """A cell class's `render`, drawing `spoken()` instead in screen-reader mode."""

    @functools.wraps(drawn)
    def render(self: Cell) -> Any:
        if reading_aloud(self):
            return self.spoken()
        return drawn(self)

    return render


class Cell(Widget):
    """A focusable piece of the conversation."""

    can_focus = True
    ROLE: ClassVar[str] = "note"
    """The word a screen reader hears first for this kind of cell ("you", "agent", "error",
    "note"...: see `screen_reader.KNOWN_ROLES`)."""
    _drawn: ClassVar[RenderFunction] = Widget.render
    """The class's own `render`, as it draws for the eye."""
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter,space", "toggle_body", "Expand", show=False),
        Binding("c", "copy", "Copy", show=False),
        Binding("up", "step(-1)", "Older", show=False),
        Binding("down", "step(1)", "Newer", show=False),
        Binding("escape", "leave", "Back to the composer", show=False),
    ]
    CELL_KEYS: ClassVar[frozenset[str]] = frozenset({"c", "space"})
    """Printable keys a cell acts on, when it was focused on purpose (from the keyboard)."""

    expanded: reactive[bool] = reactive(False, toggle_class="-expanded", layout=True)
    event_index: int = -1
    """The index of the event that made this cell (for reading older events back)."""
    _by_pointer = False
    """Whether a click focused the cell (then its keys are the composer's: see on_key)."""

    class Left(Message):
        """Esc on a cell, or text typed where it has focus: the composer takes over, with
        the character typed (if any)."""

        def __init__(self, cell: Cell, character: str = "") -> None:
            super().__init__()
            self.cell = cell
            self.character = character

        @property
        def control(self) -> Cell:
            """The cell that gives the focus back."""
            return self.cell

    class PastNewest(Message):
        """Down on the newest cell: the view holding it decides where to go (newer cells
        loaded below, or the composer)."""

        def __init__(self, cell: Cell) -> None:
            super().__init__()
            self.cell = cell

        @property
        def control(self) -> Cell:
            """The newest cell, which Down was pressed on."""
            return self.cell

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        drawn = cls.__dict__.get("render")
        if drawn is not None:  # every cell class, ours or a new one, reads aloud
            cls._drawn = drawn
            cls.render = _spoken_or(drawn)  # type: ignore[method-assign,assignment]

    def drawn(self) -> Any:
        """What the cell shows for the eye (its class's own `render`)."""
        return type(self)._drawn(self)

    def spoken_parts(self) -> list[Part]:
        """What the cell says in screen-reader mode, as (role, text) parts. By default: its
        ROLE, and the text of what it shows, glyphs said in words."""
        width = self.content_size.width or 100
        return [(self.ROLE, speakable(plain_text(self.drawn(), width)))]

    def spoken(self) -> Content:
        """The cell as plain lines, each part starting with its role; "> " marks the
        focused cell (in place of the coloured border the eye sees)."""
        content = spoken_content(self.spoken_parts())
        return Content.assemble("> ", content) if self.has_focus else content

    def on_focus(self) -> None:
        if reading_aloud(self):
            self.refresh(layout=True)  # its "> " mark

    def on_mouse_down(self) -> None:
        self._by_pointer = True

    def on_blur(self) -> None:
        self._by_pointer = False
        if reading_aloud(self):
            self.refresh(layout=True)

    def on_key(self, event: events.Key) -> None:
        """Text typed on a cell is never lost: it goes to the composer, unless the cell was
        focused on purpose and the key is one of its own (`c` copies, space expands)."""
        if not event.is_printable or event.character is None:
            return
        if event.key in self.CELL_KEYS and not self._by_pointer:
            return
        event.stop()
        event.prevent_default()
        self.post_message(self.Left(self, event.character))

    def action_leave(self) -> None:
        """Back to the composer."""
        self.post_message(self.Left(self))

    def copy_text(self) -> str:
        """The cell's text, for the clipboard."""
        return ""

    def can_expand(self) -> bool:
        """Whether the cell has more to show than it shows collapsed."""
        return False

    def action_toggle_body(self) -> None:
        """Expand or collapse the body."""
        if self.can_expand():
            self.expanded = not self.expanded

    def action_step(self, direction: int) -> None:
        """Focus the cell before (-1) or after (1) this one; past the newest, the composer."""
        parent = self.parent
        siblings = [w for w in parent.children if isinstance(w, Cell)] if parent else [self]
        index = siblings.index(self) + direction
        if 0 <= index < len(siblings):
            siblings[index].focus()
        elif direction > 0:
            self.post_message(self.PastNewest(self))
        elif isinstance(parent, Widget):
            parent.scroll_home(animate=False)  # at the top: older cells load as it scrolls up

    def action_copy(self) -> None:
        """Copy the cell's text to the clipboard."""
        self.app.copy_to_clipboard(self.copy_text())
        self.notify("Copied to the clipboard", timeout=2, markup=False)

    def render_line(self, y: int) -> Strip:
        """A line as drawn, with the hits of a transcript search marked (see find_marks)."""
        line = super().render_line(y)
        view = self.parent
        marks = view.find_marks if isinstance(view, ConversationView) else None
        if marks is None:
            return line
        return mark_strip(line, marks.term, current=marks.current is self and marks.line == y)


class UserCell(Cell):
    """A message the user sent (or queued)."""

    ROLE = "you"
    queued: reactive[bool] = reactive(False, toggle_class="-queued")

    def __init__(self, text: str, queued: bool = False, event_id: str | None = None) -> None:
        super().__init__(classes="cell user")
        self.text = text
        self.event_id = event_id
        self.set_reactive(UserCell.queued, queued)
        self.set_class(queued, "-queued")

    def render(self) -> Content:
        marker = Content.styled("❯ ", "bold $text-primary")
        shown, hidden = clip_lines(self.text, 10_000_000 if self.expanded else USER_LINES)
        body = Content(shown)
        if hidden:
            more = f"\n… {more_lines(hidden)} · enter to expand"
            body = Content.assemble(body, Content.styled(more, "italic dim"))
        if self.queued:
            return Content.assemble(marker, body, Content.styled("  (queued)", "italic dim"))
        return Content.assemble(marker, body)

    def can_expand(self) -> bool:
        """A long message (a pasted log) can be expanded."""
        return self.text.count("\n") >= USER_LINES

    def spoken_parts(self) -> list[Part]:
        """ "you: the message" ("you, queued:" until it is sent), long ones clipped."""
        shown, hidden = clip_lines(self.text, 10_000_000 if self.expanded else USER_LINES)
        more = f"\n… {more_lines(hidden)}, enter to expand" if hidden else ""
        role = "you, queued" if self.queued else "you"
        return [(role, without_shapes(shown) + more)]

    def copy_text(self) -> str:
        """The message."""
        return self.text


class AgentCell(Cell):
    """The agent's finished text, rendered as Markdown."""

    ROLE = "agent"

    def __init__(self, text: str = "", reasoning: str = "") -> None:
        super().__init__(classes="cell agent")
        self.text = text
        self.reasoning = reasoning
        self._rendered: tuple[tuple[bool, bool], RenderableType] | None = None
        """The last render and what it was made for (expanded, dark): parsing Markdown
        again at every layout of the view cost more than all the rest of an event."""

    def render(self) -> RenderableType:
        key = (self.expanded, self.app.current_theme.dark)
        if self._rendered is not None and self._rendered[0] == key:
            return self._rendered[1]
        parts: list[RenderableType] = []
        if self.reasoning:
            shown, hidden = clip_lines(self.reasoning, 100 if self.expanded else 2)
            note = f"\n… {more_lines(hidden)} of reasoning" if hidden else ""
            parts.append(Content.styled(f"{shown}{note}", "italic dim"))
        parts.append(_markdown(self.text, key[1]))
        rendered = Group(*parts)
        self._rendered = (key, rendered)
        return rendered

    def can_expand(self) -> bool:
        """Long reasoning can be expanded."""
        return self.reasoning.count("\n") > 1

    def spoken_parts(self) -> list[Part]:
        """ "thinking: …" (its first lines until expanded), then "agent: the text"."""
        parts: list[Part] = []
        if self.reasoning:
            shown, hidden = clip_lines(self.reasoning, 100 if self.expanded else 2)
            note = f"\n… {more_lines(hidden)} of reasoning" if hidden else ""
            parts.append(("thinking", without_shapes(shown) + note))
        parts.append(("agent", plain_markdown(self.text)))
        return parts

    def copy_text(self) -> str:
        """The text, as Markdown."""
        return self.text


class StreamingCell(Cell):
    """A response being written, as one widget: its reasoning line, its finished paragraphs
    and the paragraph still growing. Chunks are kept as they come and joined once per redraw
    (those that arrive before it runs share it); a finished paragraph is drawn once and kept, so a
    redraw draws and repaints only the rows of the growing paragraph. Blank rows are held
    under the text (STREAM_RESERVE_FRACTION of the view): the view is laid out again, and
    scrolls, once that reserve is used up rather than at every new line. The final cell that
    replaces this one holds no blank rows."""

    DEFAULT_CSS = "StreamingCell { height: auto; }"
    ROLE = "agent"

    def __init__(self, response_id: str) -> None:
        super().__init__(classes="cell agent streaming")
        self.response_id = response_id
        self._settled: list[str] = []
        """Finished paragraphs (drawn once, in `blocks`)."""
        self._growing: list[str] = []
        """The chunks of the paragraph still being written."""
        self._reasoning: list[str] = []
        self._thought: Text | None = None
        self.blocks = FinishedBlocks()
        """The finished paragraphs as drawn."""
        self._shown = Block(Text("…"))
        self._scheduled = False
        self.reserve = 0
        """Rows the cell holds at least: its text and blank rows under it."""
        self._drawn_width = 0

    @property
    def text(self) -> str:
        """The text so far."""
        return "".join(self._settled) + "".join(self._growing)

    @property
    def reasoning(self) -> str:
        """The reasoning so far."""
        return "".join(self._reasoning)

    def render(self) -> GrowingVisual:
        return GrowingVisual(self, self._thought, self.blocks, self._shown)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        """The text's height, or the reserve if that is more."""
        return max(super().get_content_height(container, viewport, width), self.reserve)

    def spoken_parts(self) -> list[Part]:
        """The reasoning's last line, then the text so far (no blank rows held under it:
        they would read as silence)."""
        parts: list[Part] = []
        lines = self.reasoning.strip().splitlines()
        if lines:
            parts.append(("thinking", without_shapes(lines[-1])))
        parts.append(("agent", plain_markdown(self.text) if self.text else "(writing)"))
        return parts

    def append(self, content: str, reasoning: str = "") -> None:
        """Add streamed text, drawn in the next frame."""
        if content:
            self._growing.append(content)
        if reasoning:
            self._reasoning.append(reasoning)
        self._schedule_redraw()

    def on_resize(self) -> None:
        """A new width (or the first): measure the text and the reserve again."""
        if self.content_size.width != self._drawn_width:
            self._schedule_redraw()

    def _schedule_redraw(self) -> None:
        """Redraw once the messages waiting now are handled (no throttle of its own: the
        screen draws at most TEXTUAL_FPS frames a second, and one redraw serves them all)."""
        if self._scheduled:
            return
        self._scheduled = True
        self.call_later(self._redraw)

    def _redraw(self) -> None:
        self._scheduled = False
        if not self.is_attached:
            return
        if reading_aloud(self):  # plain lines, laid out as they come
            self.refresh(layout=True)
            return
        width = self._drawn_width = self.content_size.width
        unchanged = self._rows_above(width) if width else 0  # rows above the growing paragraph
        if self._reasoning and self._show_thought():
            unchanged = 0
        growing = "".join(self._growing)
        boundary = _settled_boundary(growing)
        dark = self.app.current_theme.dark
        if boundary:
            done = growing[:boundary]
            self.blocks.add(self._block(done.rstrip("\n"), dark))
            self._settled.append(done)
            growing = growing[boundary:]
        self._growing = [growing] if growing else []
        # A very long paragraph is shown plain while it grows: re-parsing it every frame would not.
        self._shown = self._block(growing, dark) if len(growing) < 1500 else Block(Text(growing))
        height = self.content_size.height
        rows = self._hold_rows(width) if width else 0
        if not width or rows != height:
            self.refresh(layout=True)
        else:  # the rows above the growing paragraph are on screen already
            self.refresh(Region(0, unchanged, width, height - unchanged))

    def _block(self, text: str, dark: bool) -> Block:
        """`text` as drawn under the paragraphs before it. Markdown starts a list or a quote
        with a blank row at the top of a text but not after a paragraph (the gap that
        follows each paragraph is there already): drawn after a one-row lead-in paragraph
        that is then skipped, each element looks as it will in the finished response."""
        if not self.blocks.blocks:
            return Block(_markdown(text, dark))
        shown = _markdown(text, dark)
        if isinstance(shown, Markdown):
            return Block(_markdown(f"_\n\n{text}", dark), skip=2)
        return Block(shown)

    def _show_thought(self) -> bool:
        """Show the last line of the reasoning at the top; whether it changed."""
        lines = self.reasoning.strip().splitlines()
        last, _ = clip_lines(lines[-1], 1) if lines else ("", 0)
        if self._thought is not None and self._thought.plain == f"thinking: {last}":
            return False
        self._thought = Text(f"thinking: {last}", style="italic dim")
        return True

    @property
    def _rules(self) -> RulesMap:
        return cast("RulesMap", self.styles)

    def _rows_above(self, width: int) -> int:
        """Rows of the reasoning line and the finished paragraphs at `width`."""
        thought = 0 if self._thought is None else _rows(self, self._thought, width)
        return thought + self.blocks.rows(self, self._rules, width)

    def _hold_rows(self, width: int) -> int:
        """The rows the cell takes now: its reserve, grown by whole steps when the text
        reaches its last row. (It never shrinks while the response streams: a reserve that
        came and went with the view's scrollbar would make the scrollbar come and go.)"""
        text_rows = self._rows_above(width) + self._shown.rows(self, self._rules, width)
        if text_rows >= self.reserve:  # at least one blank row: more is coming
            step = self._reserve_step()
            self.reserve += step * -(-(text_rows + 1 - self.reserve) // step)
        return self.reserve

    def _reserve_step(self) -> int:
        """Rows the reserve grows by: a share of the view's height."""
        parent = self.parent
        height = parent.scrollable_content_region.height if isinstance(parent, Widget) else 0
        return max(1, int(height * STREAM_RESERVE_FRACTION))

    def copy_text(self) -> str:
        """The text so far."""
        return self.text


@dataclass(frozen=True)
class ResultView:
    """How the result of a tool call shows (made from the engine's types by the cell factory)."""

    status: Content | None
    """The line under the title (exit code, rejection, error), or None."""
    failed: bool
    output: str = ""
    """The output as text, for the clipboard."""
    body: Callable[[int], Content | None] = lambda limit: None
    """The body at most `limit` lines long (diff, output, checklist), or None."""


TOOL_ROLES = {"terminal": "command", "file_editor": "edit", "think": "thinking"}
"""The role a screen reader hears for a tool's calls (any other tool's: "tool")."""
SPOKEN_RISKS = ("LOW", "MEDIUM", "HIGH")


class ActionCell(Cell):
    """A tool call: a one-line title, and its result folded in when it arrives."""

    ROLE = "tool"

    def __init__(self, action_event: Any, title: Content, detail: str, summary: str = "") -> None:
        """`summary`: the title in words, without its icon and badge (for screen readers;
        "": the title's text)."""
        super().__init__(classes=f"cell action tool-{action_event.tool_name}")
        self.action_event = action_event
        self.title = title
        self.detail = detail
        self.summary = summary
        self.result: ResultView | None = None
        self.waiting = False

    @property
    def tool_call_id(self) -> str:
        """The call this cell shows."""
        return str(self.action_event.tool_call_id)

    def set_result(self, result: ResultView) -> None:
        """Fold in the observation, rejection or error that answers the call."""
        self.result = result
        self.waiting = False
        self.set_class(result.failed, "-failed")
        self.refresh(layout=True)

    def set_waiting(self, waiting: bool) -> None:
        """Mark the action as waiting for approval."""
        if waiting != self.waiting:
            self.waiting = waiting
            self.refresh(layout=True)

    def render(self) -> Content:
        lines = [self.title]
        result = self.result
        if result is None:
            if self.waiting:
                lines.append(Content.styled("  ⏸ waiting for your approval", "$text-warning"))
            else:
                lines.append(Content.styled("  … running", "dim"))
            return Content("\n").join(lines)
        if result.status is not None:
            lines.append(result.status)
        body = result.body(10_000 if self.expanded else COLLAPSED_LINES)
        if body is not None:
            lines.append(body)
        return Content("\n").join(lines)

    def can_expand(self) -> bool:
        """Long output and diffs can be expanded."""
        return True

    def spoken_parts(self) -> list[Part]:
        """ "command: ls, LOW risk", then "needs approval: …", "status: running" or the
        result ("result: exit 0", "error: exit 1") and "output: …"."""
        risk = str(self.action_event.security_risk.value)
        title = self.summary or speakable(self.title.plain)
        if risk in SPOKEN_RISKS:
            title = f"{title}, {risk} risk"
        parts: list[Part] = [(TOOL_ROLES.get(self.action_event.tool_name, self.ROLE), title)]
        result = self.result
        if result is None:
            waiting = "waiting for your approval"
            parts.append(("needs approval", waiting) if self.waiting else ("status", "running"))
            return parts
        if result.status is not None:
            status = re.sub(r"^[✓✗]\s*", "", result.status.plain.strip())
            parts.append(("error" if result.failed else "result", status))
        body = result.body(10_000 if self.expanded else COLLAPSED_LINES)
        if body is not None:
            parts.append(("output", _spoken_output(body.plain)))
        return parts

    def copy_text(self) -> str:
        """The command (or path) and its output."""
        output = self.result.output if self.result is not None else ""
        return f"{self.detail}\n{output}".strip()


class ThinkCell(ActionCell):
    """A thought the agent logged with the `think` tool: dim text, three lines until expanded."""

    ROLE = "thinking"

    def __init__(self, action_event: Any, thought: str) -> None:
        super().__init__(action_event, Content(""), thought)

    def spoken_parts(self) -> list[Part]:
        """ "thinking: the thought" (its first lines until expanded)."""
        shown, hidden = clip_lines(self.detail, 200 if self.expanded else 3)
        more = f"\n… {more_lines(hidden)}" if hidden else ""
        return [("thinking", without_shapes(shown) + more)]

    def render(self) -> Content:
        shown, hidden = clip_lines(self.detail, 200 if self.expanded else 3)
        more = f"\n… {more_lines(hidden)}" if hidden else ""
        return Content.styled(f"… {shown}{more}", "italic dim")

    def copy_text(self) -> str:
        """The thought."""
        return self.detail


class FinishCell(AgentCell):
    """The agent's final answer (its `finish` message)."""

    def __init__(self, action_event: Any, message: str) -> None:
        super().__init__(message)
        self.add_class("finish")
        self.action_event = action_event

    @property
    def tool_call_id(self) -> str:
        """The finish call."""
        return str(self.action_event.tool_call_id)

    def set_result(self, result: ResultView) -> None:
        """Nothing to show: the message is the result."""


class NoticeCell(Cell):
    """A quiet one-liner: pause, rejection, condensation, stuck, hook notices."""

    TONE_ROLES: ClassVar[dict[str, str]] = {"warning": "warning", "error": "error"}
    """Tones said in words: elsewhere only the colour says them."""

    def __init__(self, text: str, tone: str = "muted") -> None:
        super().__init__(classes=f"cell notice -{tone}")
        self.text = text
        self.tone = tone

    def render(self) -> Content:
        return Content(self.text)

    def spoken_parts(self) -> list[Part]:
        """ "note: …", "warning: …" or "error: …", by its tone."""
        return [(self.TONE_ROLES.get(self.tone, self.ROLE), speakable(self.text))]

    def copy_text(self) -> str:
        """The notice."""
        return self.text


class BranchCell(NoticeCell):
    """Where other branches of the conversation leave the one shown (a rewind left them);
    Enter (or a click) switches to the next of them."""

    class Switch(Message):
        """Show the next branch leaving the event this marker follows."""

        def __init__(self, cell: BranchCell) -> None:
            super().__init__()
            self.cell = cell

        @property
        def control(self) -> BranchCell:
            """The marker pressed."""
            return self.cell

    def __init__(self, branches: int) -> None:
        super().__init__(f"⎇ {branches} branches here · enter to switch · /rewind to go back")
        self.add_class("branch")
        self.branches = branches

    def action_toggle_body(self) -> None:
        """Enter: switch branches here."""
        self.post_message(self.Switch(self))

    def on_click(self) -> None:
        """A click switches too."""
        self.focus()
        self.post_message(self.Switch(self))


class ErrorCell(Cell):
    """An error, in red, saying what to do."""

    ROLE = "error"

    def __init__(self, title: str, detail: str) -> None:
        super().__init__(classes="cell error")
        self.title = title
        self.detail = detail

    def render(self) -> Content:
        return Content.assemble(
            Content.styled(f"✗ {self.title}", "bold $text-error"), "\n", Content(self.detail)
        )

    def spoken_parts(self) -> list[Part]:
        """ "error: the title", then the detail."""
        return [("error", without_shapes(f"{self.title}\n{self.detail}"))]

    def copy_text(self) -> str:
        """The error."""
        return f"{self.title}\n{self.detail}"


_MARKDOWN_SYNTAX = re.compile(r"[*_`#>|\[\]]|^\s*([-+]|\d+\.)\s", re.MULTILINE)


SECRET_MASK = "<secret-hidden>"
"""The engine's mask for secrets (not imported from it: the engine loads after the first frame)."""
SHOWN_SECRET_MASK = "‹secret-hidden›"


def _markdown(text: str, dark: bool) -> RenderableType:
    """Markdown, or plain text when there is no Markdown in it (much cheaper to draw)."""
    # Markdown drops what looks like an HTML tag, and the secret mask looks like one.
    text = text.replace(SECRET_MASK, SHOWN_SECRET_MASK)
    if not _MARKDOWN_SYNTAX.search(text):
        return Text(text)
    return Markdown(text, code_theme="monokai" if dark else "default")


def plain_markdown(text: str) -> str:
    """The agent's Markdown as plain lines for a screen reader: no markup characters, a
    quote as "> ", no shapes."""
    text = text.replace(SECRET_MASK, SHOWN_SECRET_MASK)
    lines = []
    for line in text.splitlines():
        if _TABLE_RULE.match(line):
            continue  # |---|---|: a drawing, not words
        if _TABLE_ROW.match(line):  # a table row: its cells, one after the other
            lines.append(", ".join(cell.strip() for cell in line.strip().strip("|").split("|")))
        else:
            lines.append(line)
    return without_shapes(markdown_content("\n".join(lines)).plain.replace("▎ ", "> "))


_TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")


def _spoken_output(text: str) -> str:
    """A result's body for a screen reader: its own text as it is (no shapes), our "… 3 more
    lines · enter to expand" and checklist marks in words."""
    lines = textwrap.dedent(text).splitlines()
    return "\n".join(
        speakable(line) if _OUR_MARKS.match(line) else without_shapes(line) for line in lines
    )


_OUR_MARKS = re.compile(r"^\s*[…☑◐☐] ")


def _settled_boundary(text: str) -> int:
    """The end of the last finished paragraph in `text` that is not inside a code fence (0 for
    none). `text` starts outside a fence: where the last settled paragraph ended."""
    boundary = 0
    position = text.find("\n\n")
    while position != -1:
        end = position + 2
        if text.count("```", 0, end) % 2 == 0:
            boundary = end
        position = text.find("\n\n", end)
    return boundary


def _rows(widget: Widget, content: RenderableType, width: int) -> int:
    """The rows `content` takes in `widget` at `width` columns."""
    # Textual measures with the widget's styles too (its own get_content_height).
    rules = cast("RulesMap", widget.styles)
    return visualize(widget, content).get_height(rules, width)
