"""Engine events to cells: the typed border between the engine and the conversation view.

It imports the engine's event, action and observation types at its top and dispatches on
them (`functools.singledispatch`), so a new event or tool type is one registered function.
It is imported once the engine has loaded (`widgets.engine_import.load_engine`), never on
the way to the first frame. The view keeps the bookkeeping (which calls are on screen, what
streamed, what is queued) and hands it in as a `CellHost`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import singledispatch
from typing import Protocol

from textual.content import Content

from ohtui.sdk.event import (
    ActionEvent,
    AgentErrorEvent,
    CheckpointEvent,
    CheckpointRestoreEvent,
    Condensation,
    ConversationErrorEvent,
    Event,
    HookExecutionEvent,
    InterruptEvent,
    MessageEvent,
    ObservationBaseEvent,
    ObservationEvent,
    PauseEvent,
    UserRejectObservation,
)
from ohtui.sdk.event.foreign import ForeignEvent
from ohtui.sdk.llm.message import ImageContent, text_of
from ohtui.sdk.mcp.definition import MCPToolAction
from ohtui.sdk.tool import Action, Observation
from ohtui.sdk.tool.builtins import FinishAction, FinishObservation, ThinkAction, ThinkObservation
from ohtui.sdk.tools.file_editor import FileEditorAction, FileEditorObservation
from ohtui.sdk.tools.task_tracker import TaskItem, TaskTrackerObservation
from ohtui.sdk.tools.terminal import TerminalAction, TerminalObservation
from ohtui.tui.checkpoint_types import FileChange
from ohtui.tui.display import clip_lines, more_lines
from ohtui.tui.render import TOOL_ICONS, action_summary, diff_content, risk_badge
from ohtui.tui.widgets.attached import shown_text
from ohtui.tui.widgets.cells import (
    ActionCell,
    AgentCell,
    Cell,
    ErrorCell,
    FinishCell,
    NoticeCell,
    ResultView,
    ThinkCell,
    UserCell,
)
from ohtui.tui.widgets.checkpoint_cells import NO_CHECKPOINT, RestoreCell
from ohtui.tui.widgets.context_cells import CondensationCell, skills_line

_EXIT_LINE = re.compile(r"\n?\[exit code -?\d+\]$")
"""The terminal's own status line at the end of its output: the cell shows it as a badge."""
_QUIET_ERRORS = {"AgentStuck": "stuck"}
_ERROR_TITLES = {
    "MaxIterationsReached": "The agent ran out of steps",
    "LLMAuthenticationError": "The model provider refused the API key",
    "LLMRateLimitError": "Rate limited by the model provider",
    "LLMContextWindowExceedError": "The conversation is too long for the model",
    "LLMServiceUnavailableError": "The model could not be reached",
    "LLMTimeoutError": "The model did not answer in time",
    "LLMBadRequestError": "The model provider refused the request",
}
_NAMELESS_ACTIONS = (TerminalAction, FileEditorAction)
"""Actions whose summary says what they are: no tool name in their title."""


def error_title(code: str) -> str:
    """The heading a run's error shows, in words, by its code."""
    return _ERROR_TITLES.get(code, f"The run failed ({code})")


class CellHost(Protocol):
    """What the factory needs from the view that shows the cells."""

    expand_outputs: bool

    def claim_queued(self, text: str, event_id: str) -> bool:
        """Mark the queued message `text` as delivered; False if none is shown."""
        ...

    def replace_stream(self, response_id: str | None, final: Cell | None) -> bool:
        """Swap the streamed cell of `response_id` for `final`; False if none streamed."""
        ...

    def action_cell(self, tool_call_id: str) -> ActionCell | FinishCell | None:
        """The cell on screen for a tool call."""
        ...

    def track_action(self, cell: ActionCell | FinishCell) -> ResultView | None:
        """Remember a new action cell; the result that arrived before it, if any."""
        ...

    def keep_orphan(self, tool_call_id: str, result: ResultView) -> None:
        """Keep the result of a call whose action is not on screen (yet)."""
        ...


# --- events ---------------------------------------------------------------------------------


@singledispatch
def cells_for(event: Event, host: CellHost) -> list[Cell]:
    """The cells that show `event` (none for events that only the engine needs)."""
    return []


@cells_for.register
def _(event: MessageEvent, host: CellHost) -> list[Cell]:
    text = event.llm_message.text
    if event.source == "user":
        text = shown_text(text, _image_count(event))
        made: list[Cell] = (
            [] if host.claim_queued(text, event.id) else [UserCell(text, event_id=event.id)]
        )
        if event.activated_skills:  # knowledge skills its words triggered
            made.append(NoticeCell(skills_line(event.activated_skills), "skills"))
        return made
    if event.source == "environment":
        return [NoticeCell(f"↪ {event.sender or 'ohtui'}: {text}", "muted")]
    cell = AgentCell(text, event.reasoning_content)
    return [] if host.replace_stream(event.llm_response_id, cell) else [cell]


def _image_count(event: MessageEvent) -> int:
    parts = event.llm_message.content
    return sum(len(part.image_urls) for part in parts if isinstance(part, ImageContent))


@cells_for.register
def _(event: ActionEvent, host: CellHost) -> list[Cell]:
    made: list[Cell] = []
    thought = text_of(event.thought)
    thought_cell = AgentCell(thought, event.reasoning_content or "") if thought.strip() else None
    if not host.replace_stream(event.llm_response_id, thought_cell) and thought_cell:
        made.append(thought_cell)
    cell = action_cell(event.action, event)
    cell.expanded = host.expand_outputs
    early = host.track_action(cell)
    if early is not None:
        cell.set_result(early)
    made.append(cell)
    return made


@cells_for.register
def _(event: ObservationBaseEvent, host: CellHost) -> list[Cell]:
    cell = host.action_cell(event.tool_call_id)
    if cell is not None:
        cell.set_result(present_result(event))
    else:
        host.keep_orphan(event.tool_call_id, present_result(event))  # its action is not shown
    return []


@cells_for.register
def _(event: AgentErrorEvent, host: CellHost) -> list[Cell]:
    cell = host.action_cell(event.tool_call_id)
    if cell is None:
        return [ErrorCell(f"{event.tool_name} failed", event.error)]
    cell.set_result(present_result(event))
    return []


@cells_for.register
def _(event: ConversationErrorEvent, host: CellHost) -> list[Cell]:
    if event.code in _QUIET_ERRORS:
        return [NoticeCell(f"⚠ {event.detail}", "warning")]
    return [ErrorCell(error_title(event.code), event.detail)]


@cells_for.register
def _(event: PauseEvent, host: CellHost) -> list[Cell]:
    return [NoticeCell("⏸ Paused. Send a message to go on.", "warning")]


@cells_for.register
def _(event: InterruptEvent, host: CellHost) -> list[Cell]:
    return [NoticeCell("⏹ Interrupted. Send a message to go on.", "warning")]


@cells_for.register
def _(event: Condensation, host: CellHost) -> list[Cell]:
    return [CondensationCell(len(event.forgotten_event_ids), event.summary)]


@cells_for.register
def _(event: ForeignEvent, host: CellHost) -> list[Cell]:
    return [NoticeCell(f"· {event.summary}", "muted")]  # a kind an agent server has, we lack


@cells_for.register
def _(event: HookExecutionEvent, host: CellHost) -> list[Cell]:
    if event.error:
        return [NoticeCell(event.visualize.plain, "error")]
    if event.blocked:
        return [NoticeCell(event.visualize.plain, "warning")]
    if event.additional_context:
        return [NoticeCell(event.visualize.plain, "muted")]
    return []  # a hook that ran and said nothing: every tool call would show one


@cells_for.register
def _(event: CheckpointEvent, host: CellHost) -> list[Cell]:
    if event.checkpoint_id is not None:
        return []  # one before every action that may change the workspace: too many to show
    reason = event.unavailable or "none could be taken"
    return [NoticeCell(NO_CHECKPOINT.format(reason=reason), "muted")]


@cells_for.register
def _(event: CheckpointRestoreEvent, host: CellHost) -> list[Cell]:
    return [RestoreCell(event.label, [FileChange(c.path, c.status) for c in event.changes])]


# --- actions --------------------------------------------------------------------------------


@singledispatch
def action_cell(action: Action | None, event: ActionEvent) -> ActionCell | FinishCell:
    """The cell for a tool call, by the type of its action (None: it did not validate)."""
    summary, detail = action_summary(event)
    icon = TOOL_ICONS.get(event.tool_name, "⚙")
    name = "" if isinstance(action, _NAMELESS_ACTIONS) else f"{event.tool_name} "
    title = Content.assemble(
        Content.styled(f"{icon} ", "bold $text-accent"),
        Content.styled(name, "bold"),
        Content.styled(summary, "bold"),
    )
    badge = risk_badge(event.security_risk.value)
    if badge.plain:
        title = Content.assemble(title, "  ", badge)
    return ActionCell(event, title, detail, summary=f"{name}{summary}")


@action_cell.register
def _(action: MCPToolAction, event: ActionEvent) -> ActionCell | FinishCell:
    summary, detail = action_summary(event)
    title = Content.assemble(
        Content.styled("⚙ ", "bold $text-accent"),
        Content.styled(f"{action.server} ", "$text-accent"),
        Content.styled(f"{action.tool} ", "bold"),
        Content.styled(summary, ""),
    )
    badge = risk_badge(event.security_risk.value)
    if badge.plain:
        title = Content.assemble(title, "  ", badge)
    return ActionCell(event, title, detail, summary=f"{action.server} {action.tool} {summary}")


@action_cell.register
def _(action: ThinkAction, event: ActionEvent) -> ActionCell | FinishCell:
    return ThinkCell(event, action.thought)


@action_cell.register
def _(action: FinishAction, event: ActionEvent) -> ActionCell | FinishCell:
    return FinishCell(event, action.message)


# --- results --------------------------------------------------------------------------------


@singledispatch
def present_result(result: ObservationBaseEvent) -> ResultView:
    """How the answer to a tool call shows in its cell."""
    return ResultView(status=None, failed=False)


@present_result.register
def _(result: ObservationEvent) -> ResultView:
    return present_observation(result.observation)


@present_result.register
def _(result: UserRejectObservation) -> ResultView:
    status = Content.styled(f"  ✗ rejected: {result.rejection_reason}", "$text-warning")
    return ResultView(status=status, failed=True, output=result.rejection_reason)


@present_result.register
def _(result: AgentErrorEvent) -> ResultView:
    return ResultView(Content.styled(f"  ✗ {result.error}", "$text-error"), True, result.error)


@singledispatch
def present_observation(observation: Observation) -> ResultView:
    """Any tool's result: its text; marked failed when it is an error."""
    return _as_text(observation)


def _as_text(observation: Observation) -> ResultView:
    text = observation.text.rstrip()
    status = Content.styled("  ✗ failed", "$text-error") if observation.is_error else None
    return ResultView(status, observation.is_error, text, _text_body(text))


@present_observation.register
def _(observation: TerminalObservation) -> ResultView:
    text = _EXIT_LINE.sub("", observation.text.rstrip())
    code = observation.exit_code
    if observation.timed_out:
        status = Content.styled("  ✗ timed out, killed", "$text-error")
    elif observation.interrupted:
        status = Content.styled("  ✗ interrupted", "$text-warning")
    elif observation.is_error:
        label = f"exit {code}" if code is not None else "failed"
        status = Content.styled(f"  ✗ {label}", "$text-error")
    else:
        label = f"exit {code}" if code is not None else "done"
        status = Content.styled(f"  ✓ {label}", "$text-success")
    return ResultView(status, observation.is_error, text, _text_body(text))


@present_observation.register
def _(observation: FileEditorObservation) -> ResultView:
    text = observation.text.rstrip()
    diff = observation.diff
    if observation.is_error:
        status = Content.styled("  ✗ failed", "$text-error")
        return ResultView(status, True, text, _text_body(text))
    if diff:
        return ResultView(None, False, diff, lambda limit: diff_content(diff, limit, indent=2))
    if observation.command == "view":
        return ResultView(None, False, text, _text_body(text))
    return ResultView(None, False, text)  # the title says what was done


@present_observation.register
def _(observation: TaskTrackerObservation) -> ResultView:
    if observation.is_error:
        return _as_text(observation)
    tasks = list(observation.task_list)
    return ResultView(None, False, observation.text, lambda limit: checklist(tasks))


@present_observation.register(FinishObservation)
@present_observation.register(ThinkObservation)
def _(observation: Observation) -> ResultView:
    return ResultView(None, observation.is_error)  # the action's own cell says it all


def _text_body(text: str) -> Callable[[int], Content | None]:
    """A body that shows `text` dimmed, indented and clipped, saying how much is left out."""

    def body(limit: int) -> Content | None:
        if not text.strip():
            return None
        shown, hidden = clip_lines(text, limit)
        content = Content(_indent(shown)).stylize("dim")
        if hidden:
            more = Content.styled(f"\n  … {more_lines(hidden)} · enter to expand", "italic dim")
            content = Content.assemble(content, more)
        return content

    return body


def checklist(tasks: list[TaskItem]) -> Content:
    """The plan as a checklist: done tasks ticked and dimmed, the current one half-filled."""
    marks = {"done": ("☑", "$text-success"), "in_progress": ("◐", "$text-warning")}
    lines = []
    for task in tasks:
        mark, style = marks.get(task.status, ("☐", ""))
        text = Content.styled(f"  {mark} {task.title}", style)
        if task.status == "done":
            text = text.stylize("dim")
        lines.append(text)
        # Each line of the task's notes, indented under its title.
        lines += [Content.styled(f"      {n}", "dim") for n in task.notes.splitlines() if n.strip()]
    return Content("\n").join(lines) if lines else Content.styled("  (no tasks)", "dim")


def _indent(text: str) -> str:
    return "\n".join(f"  {line}" for line in text.splitlines())
