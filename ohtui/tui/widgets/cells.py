"""One cell per thing that happened in the conversation (the cell factory makes them from
engine events; the cells themselves know nothing of the engine).

Cells are cheap single widgets that render Content or a Rich renderable, so thousands of
events never mean thousands of heavy widgets. Every cell can take focus (Tab / arrow keys
in the view), expand or collapse its body, and copy its text.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, cast

from rich.console import Group, RenderableType
from rich.markdown import Markdown
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.reactive import reactive
from textual.visual import visualize
from textual.widget import Widget
from textual.widgets import Static

from ohtui.tui.display import clip_lines, more_lines

if TYPE_CHECKING:
    from textual.css.styles import RulesMap

COLLAPSED_LINES = 6
"""Lines of a tool's output shown until the cell is expanded."""
USER_LINES = 12
"""Lines of a long user message (a pasted log) shown until the cell is expanded."""
STREAM_REFRESH_SECONDS = 1 / 40
"""Streaming text is redrawn at most this often; chunks in between are batched."""


class Cell(Widget):
    """A focusable piece of the conversation."""

    can_focus = True
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter,space", "toggle_body", "Expand", show=False),
        Binding("c", "copy", "Copy", show=False),
        Binding("up", "step(-1)", "Older", show=False),
        Binding("down", "step(1)", "Newer", show=False),
    ]

    expanded: reactive[bool] = reactive(False, toggle_class="-expanded", layout=True)
    event_index: int = -1
    """The index of the event that made this cell (for reading older events back)."""

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
            from ohtui.tui.widgets.conversation_view import ConversationView

            if isinstance(parent, ConversationView) and parent.detached:
                parent.scroll_by_keys("bottom")  # newer cells load below
            else:
                self.screen.focus_next()
        elif isinstance(parent, Widget):
            parent.scroll_home(animate=False)  # at the top: older cells load as it scrolls up

    def action_copy(self) -> None:
        """Copy the cell's text to the clipboard."""
        self.app.copy_to_clipboard(self.copy_text())
        self.notify("Copied to the clipboard", timeout=2, markup=False)


class UserCell(Cell):
    """A message the user sent (or queued)."""

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

    def copy_text(self) -> str:
        """The message."""
        return self.text


class AgentCell(Cell):
    """The agent's finished text, rendered as Markdown."""

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

    def copy_text(self) -> str:
        """The text, as Markdown."""
        return self.text


class StreamingCell(Cell):
    """A response being written: the paragraph still growing, drawn at most every
    STREAM_REFRESH_SECONDS. Finished paragraphs (and the reasoning line) leave it: each is
    drawn once, as a StreamPart of its own just above it in the view, so a new line only lays
    out and draws this cell, never the text before it. Chunks are kept as they come and joined
    once per redraw, so streaming costs the same at the thousandth line as at the first."""

    DEFAULT_CSS = "StreamingCell { height: auto; }"

    def __init__(self, response_id: str) -> None:
        super().__init__(classes="cell agent streaming")
        self.response_id = response_id
        self._settled: list[str] = []
        """Finished paragraphs, each shown in its own StreamPart."""
        self._growing: list[str] = []
        """The chunks of the paragraph still being written."""
        self._reasoning: list[str] = []
        self._shown_thought = ""
        self._scheduled = False
        self._last_redraw = 0.0
        self._shown: RenderableType = Text("…")
        self._thought: StreamPart | None = None
        self.parts: list[StreamPart] = []
        """What this response shows above its growing paragraph (removed with it)."""

    @property
    def text(self) -> str:
        """The text so far."""
        return "".join(self._settled) + "".join(self._growing)

    @property
    def reasoning(self) -> str:
        """The reasoning so far."""
        return "".join(self._reasoning)

    def render(self) -> RenderableType:
        return self._shown

    def append(self, content: str, reasoning: str = "") -> None:
        """Add streamed text; drawn at once unless a redraw was very recent, then batched."""
        if content:
            self._growing.append(content)
        if reasoning:
            self._reasoning.append(reasoning)
        if self._scheduled:
            return
        self._scheduled = True
        wait = self._last_redraw + STREAM_REFRESH_SECONDS - time.monotonic()
        if wait > 0:
            self.set_timer(wait, self._redraw)
        else:
            self.call_later(self._redraw)

    def _redraw(self) -> None:
        self._scheduled = False
        if not self.is_attached:
            return
        self._last_redraw = time.monotonic()
        dark = self.app.current_theme.dark
        if self._reasoning:
            self._show_thought()
        growing = "".join(self._growing)
        boundary = _settled_boundary(growing)
        if boundary:
            done = growing[:boundary]
            self._add_part(StreamPart(_markdown(done, dark)))
            self._settled.append(done)
            growing = growing[boundary:]
        self._growing = [growing] if growing else []
        # A very long paragraph is shown plain while it grows: re-parsing it every frame would not.
        self._shown = _markdown(growing, dark) if len(growing) < 1500 else Text(growing)
        self.refresh(layout=_height_changes(self, self._shown))

    def _show_thought(self) -> None:
        """Show the last line of the reasoning, above everything else of this response."""
        lines = self.reasoning.strip().splitlines()
        last, _ = clip_lines(lines[-1], 1) if lines else ("", 0)
        if last == self._shown_thought:
            return
        self._shown_thought = last
        thought = Text(f"thinking: {last}", style="italic dim")
        if self._thought is None:
            self._thought = StreamPart(thought)
            self._add_part(self._thought, first=True)
        else:
            self._thought.update(thought, layout=_height_changes(self._thought, thought))

    def _add_part(self, part: StreamPart, first: bool = False) -> None:
        """Mount `part` above this cell (above the other parts if `first`); the topmost part
        takes the gap above the response."""
        parent = self.parent
        if not isinstance(parent, Widget):
            return
        above = self.parts[0] if first and self.parts else self
        if above is not self:
            above.remove_class("-first")
        part.set_class(above is not self or not self.parts, "-first")
        self.add_class("-continued")
        if first:
            self.parts.insert(0, part)
        else:
            self.parts.append(part)
        parent.mount(part, before=above)

    def copy_text(self) -> str:
        """The text so far."""
        return self.text


class StreamPart(Static):
    """A finished paragraph (or the reasoning line) of a response still being written."""

    def __init__(self, content: RenderableType) -> None:
        super().__init__(content, classes="stream-part")


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


class ActionCell(Cell):
    """A tool call: a one-line title, and its result folded in when it arrives."""

    def __init__(self, action_event: Any, title: Content, detail: str) -> None:
        super().__init__(classes=f"cell action tool-{action_event.tool_name}")
        self.action_event = action_event
        self.title = title
        self.detail = detail
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

    def copy_text(self) -> str:
        """The command (or path) and its output."""
        output = self.result.output if self.result is not None else ""
        return f"{self.detail}\n{output}".strip()


class ThinkCell(ActionCell):
    """A thought the agent logged with the `think` tool: dim text, three lines until expanded."""

    def __init__(self, action_event: Any, thought: str) -> None:
        super().__init__(action_event, Content(""), thought)

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

    def __init__(self, text: str, tone: str = "muted") -> None:
        super().__init__(classes=f"cell notice -{tone}")
        self.text = text

    def render(self) -> Content:
        return Content(self.text)

    def copy_text(self) -> str:
        """The notice."""
        return self.text


class ErrorCell(Cell):
    """An error, in red, saying what to do."""

    def __init__(self, title: str, detail: str) -> None:
        super().__init__(classes="cell error")
        self.title = title
        self.detail = detail

    def render(self) -> Content:
        return Content.assemble(
            Content.styled(f"✗ {self.title}", "bold $text-error"), "\n", Content(self.detail)
        )

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


def _height_changes(widget: Widget, content: RenderableType) -> bool:
    """Whether showing `content` changes `widget`'s height (else no layout is needed)."""
    width = widget.content_size.width
    if not width:
        return True
    # Textual measures with the widget's styles too (its own get_content_height).
    rules = cast("RulesMap", widget.styles)
    return visualize(widget, content).get_height(rules, width) != widget.content_size.height
