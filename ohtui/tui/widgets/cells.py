"""One cell per thing that happened in the conversation, built from engine events.

Cells are cheap single widgets that render Content or a Rich renderable, so thousands of
events never mean thousands of heavy widgets. Every cell can take focus (Tab / arrow keys
in the view), expand or collapse its body, and copy its text.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

from rich.console import Group, RenderableType
from rich.markdown import Markdown
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Static

from ohtui.tui.render import (
    COLLAPSED_LINES,
    TOOL_ICONS,
    action_summary,
    arguments,
    clip_lines,
    diff_content,
    risk_badge,
)

_STATUS_LINE = re.compile(r"\n?\[exit code -?\d+\]$")
STREAM_REFRESH_SECONDS = 1 / 40
"""Streaming text is redrawn at most this often; chunks in between are batched."""


class Cell(Widget):
    """A focusable piece of the conversation."""

    can_focus = True
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter,space", "toggle_body", "Expand", show=False),
        Binding("c", "copy", "Copy", show=False),
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
        body = Content(self.text)
        if self.queued:
            return Content.assemble(marker, body, Content.styled("  (queued)", "italic dim"))
        return Content.assemble(marker, body)

    def copy_text(self) -> str:
        """The message."""
        return self.text


class AgentCell(Cell):
    """The agent's finished text, rendered as Markdown."""

    def __init__(self, text: str = "", reasoning: str = "") -> None:
        super().__init__(classes="cell agent")
        self.text = text
        self.reasoning = reasoning

    def render(self) -> RenderableType:
        parts: list[RenderableType] = []
        if self.reasoning:
            shown, hidden = clip_lines(self.reasoning, 100 if self.expanded else 2)
            note = f"\n… {hidden} more lines of reasoning" if hidden else ""
            parts.append(Content.styled(f"{shown}{note}", "italic dim"))
        parts.append(_markdown(self.text, self.app.current_theme.dark))
        return Group(*parts)

    def can_expand(self) -> bool:
        """Long reasoning can be expanded."""
        return self.reasoning.count("\n") > 1

    def copy_text(self) -> str:
        """The text, as Markdown."""
        return self.text


class StreamingCell(Cell):
    """A response being written. Finished paragraphs are rendered once, as their own child;
    only the paragraph still growing is redrawn, at most every STREAM_REFRESH_SECONDS, so
    streaming costs the same at the thousandth line as at the first."""

    def __init__(self, response_id: str) -> None:
        super().__init__(classes="cell agent streaming")
        self.response_id = response_id
        self.text = ""
        self.reasoning = ""
        self._settled = 0
        self._scheduled = False

    def compose(self) -> ComposeResult:
        reasoning = Static(classes="reasoning")
        reasoning.display = False  # no empty row above the text
        yield reasoning
        yield Static("…", classes="tail")

    def append(self, content: str, reasoning: str = "") -> None:
        """Add streamed text; the redraw is batched with whatever else arrives soon."""
        self.text += content
        self.reasoning += reasoning
        if not self._scheduled:
            self._scheduled = True
            self.set_timer(STREAM_REFRESH_SECONDS, self._redraw)

    def _redraw(self) -> None:
        self._scheduled = False
        dark = self.app.current_theme.dark
        boundary = _settled_boundary(self.text, self._settled)
        if boundary > self._settled:
            block = Static(_markdown(self.text[self._settled : boundary], dark), classes="block")
            self.mount(block, before=self.query_one(".tail"))
            self._settled = boundary
        tail = self.text[self._settled :]
        # A very long paragraph is shown plain while it grows: re-parsing it every frame would not.
        shown: RenderableType = _markdown(tail, dark) if len(tail) < 1500 else Text(tail)
        self.query_one(".tail", Static).update(shown)
        if self.reasoning.strip():
            last, _ = clip_lines(self.reasoning.strip().splitlines()[-1], 1)
            self.query_one(".reasoning").display = True
            self.query_one(".reasoning", Static).update(
                Text(f"thinking: {last}", style="italic dim")
            )

    def copy_text(self) -> str:
        """The text so far."""
        return self.text


class ActionCell(Cell):
    """A tool call: a one-line title, and its result folded in when it arrives."""

    def __init__(self, action_event: Any) -> None:
        super().__init__(classes=f"cell action tool-{action_event.tool_name}")
        self.action_event = action_event
        self.result: Any = None
        self.waiting = False

    @property
    def tool_call_id(self) -> str:
        """The call this cell shows."""
        return str(self.action_event.tool_call_id)

    def set_result(self, result: Any) -> None:
        """Fold in the observation, rejection or error that answers the call."""
        self.result = result
        self.waiting = False
        self.set_class(self._failed(), "-failed")
        self.refresh(layout=True)

    def set_waiting(self, waiting: bool) -> None:
        """Mark the action as waiting for approval."""
        self.waiting = waiting
        self.refresh(layout=True)

    def _failed(self) -> bool:
        kind = type(self.result).__name__
        if kind in ("UserRejectObservation", "AgentErrorEvent"):
            return True
        observation = getattr(self.result, "observation", None)
        return bool(observation is not None and observation.is_error)

    def render(self) -> Content:
        event = self.action_event
        tool = event.tool_name
        if tool == "think":
            thought = str(arguments(event).get("thought", ""))
            shown, hidden = clip_lines(thought, 200 if self.expanded else 3)
            more = f"\n… {hidden} more lines" if hidden else ""
            return Content.styled(f"… {shown}{more}", "italic dim")
        summary, _ = action_summary(event)
        icon = TOOL_ICONS.get(tool, "⚙")
        title = Content.assemble(
            Content.styled(f"{icon} ", "bold $text-accent"),
            Content.styled(tool if tool not in ("terminal", "file_editor") else "", "bold"),
            Content(" " if tool not in ("terminal", "file_editor") else ""),
            Content.styled(summary, "bold"),
        )
        badge = risk_badge(event.security_risk.value)
        if badge.plain:
            title = Content.assemble(title, "  ", badge)
        lines = [title]
        status = self._status()
        if status is not None:
            lines.append(status)
        body = self._body()
        if body is not None:
            lines.append(body)
        return Content("\n").join(lines)

    def _status(self) -> Content | None:
        result = self.result
        if result is None:
            if self.waiting:
                return Content.styled("  ⏸ waiting for your approval", "$text-warning")
            return Content.styled("  … running", "dim")
        kind = type(result).__name__
        if kind == "UserRejectObservation":
            return Content.styled(f"  ✗ rejected: {result.rejection_reason}", "$text-warning")
        if kind == "AgentErrorEvent":
            return Content.styled(f"  ✗ {result.error}", "$text-error")
        observation = result.observation
        code = getattr(observation, "exit_code", None)
        if not observation.is_error and self.action_event.tool_name != "terminal":
            return None  # the body shows the result; "done" would only add noise
        if getattr(observation, "timed_out", False):
            return Content.styled("  ✗ timed out, killed", "$text-error")
        if getattr(observation, "interrupted", False):
            return Content.styled("  ✗ interrupted", "$text-warning")
        if observation.is_error:
            label = f"exit {code}" if code is not None else "failed"
            return Content.styled(f"  ✗ {label}", "$text-error")
        label = f"exit {code}" if code is not None else "done"
        return Content.styled(f"  ✓ {label}", "$text-success")

    def _body(self) -> Content | None:
        result = self.result
        if result is None or type(result).__name__ != "ObservationEvent":
            return None
        observation = result.observation
        limit = 10_000 if self.expanded else COLLAPSED_LINES
        diff = getattr(observation, "diff", None)
        if diff:
            return diff_content(diff, max_lines=limit, indent=2)
        tasks = getattr(observation, "task_list", None)
        if tasks is not None:
            return _checklist(tasks)
        if self.action_event.tool_name == "finish":
            return None
        text = _STATUS_LINE.sub("", observation.text.rstrip())
        if (
            self.action_event.tool_name == "file_editor"
            and arguments(self.action_event).get("command") != "view"
        ):
            return None
        if not text.strip():
            return None
        shown, hidden = clip_lines(text, limit)
        body = Content(_indent(shown)).stylize("dim")
        if hidden:
            more = Content.styled(f"\n  … {hidden} more lines · enter to expand", "italic dim")
            body = Content.assemble(body, more)
        return body

    def can_expand(self) -> bool:
        """Long output, diffs and thoughts can be expanded."""
        return True

    def copy_text(self) -> str:
        """The command (or path) and its output."""
        _, detail = action_summary(self.action_event)
        result = self.result
        observation = getattr(result, "observation", None)
        output = _STATUS_LINE.sub("", observation.text.rstrip()) if observation is not None else ""
        return f"{detail}\n{output}".strip()


class FinishCell(AgentCell):
    """The agent's final answer (its `finish` message)."""

    def __init__(self, action_event: Any) -> None:
        super().__init__(str(arguments(action_event).get("message", "")))
        self.add_class("finish")
        self.action_event = action_event

    @property
    def tool_call_id(self) -> str:
        """The finish call."""
        return str(self.action_event.tool_call_id)

    def set_result(self, result: Any) -> None:
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


def _settled_boundary(text: str, start: int) -> int:
    """The end of the last finished paragraph after `start` (not inside a code fence)."""
    boundary = start
    position = text.find("\n\n", start)
    while position != -1:
        end = position + 2
        if text.count("```", 0, end) % 2 == 0:
            boundary = end
        position = text.find("\n\n", end)
    return boundary


def _indent(text: str) -> str:
    return "\n".join(f"  {line}" for line in text.splitlines())


def _checklist(tasks: list[Any]) -> Content:
    marks = {"done": ("☑", "$text-success"), "in_progress": ("◐", "$text-warning")}
    lines = []
    for task in tasks:
        status = getattr(task, "status", "todo")
        mark, style = marks.get(status, ("☐", ""))
        text = Content.styled(f"  {mark} {task.title}", style or "")
        if status == "done":
            text = text.stylize("dim")
        lines.append(text)
        # Each line of the task's notes, indented under its title.
        lines += [Content.styled(f"      {n}", "dim") for n in task.notes.splitlines() if n.strip()]
    return Content("\n").join(lines) if lines else Content.styled("  (no tasks)", "dim")
