"""An engine action as an ACP tool call: its kind, title, locations, raw input, and the diff
of a file edit; an observation as the call's end: status and content (terminal output, the
edit's diff, the text the tool returned).

Imported once the engine and the protocol package have loaded.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from acp.schema import (
    ContentToolCallContent,
    FileEditToolCallContent,
    PlanEntry,
    TextContentBlock,
    ToolCallLocation,
)

from ohtui.sdk import ActionEvent, ObservationEvent
from ohtui.sdk.tools.file_editor import FileEditorAction, FileEditorObservation
from ohtui.sdk.tools.task_tracker import TaskTrackerAction, TaskTrackerObservation
from ohtui.sdk.tools.terminal import TerminalAction, TerminalObservation

ToolKind = Literal[
    "read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"
]
Content = ContentToolCallContent | FileEditToolCallContent

MAX_OUTPUT_CHARS = 20_000
"""The most of a tool's output shown in a tool call (its end: where errors are)."""

KINDS: dict[str, ToolKind] = {
    "terminal": "execute",
    "grep": "search",
    "glob": "search",
    "task_tracker": "think",
    "browser": "fetch",
}


def kind_of(action: ActionEvent) -> ToolKind:
    """The ACP kind of an action (the client picks its icon by it)."""
    inner = action.action
    if isinstance(inner, FileEditorAction):
        return "read" if inner.command == "view" else "edit"
    return KINDS.get(action.tool_name, "other")


def title_of(action: ActionEvent) -> str:
    """One line saying what the action does: the command, or what it does to which file."""
    inner = action.action
    if isinstance(inner, TerminalAction):
        command = " ".join(inner.command.split())
        return f"`{_clip(command, 160)}`" if command else "terminal"
    if isinstance(inner, FileEditorAction):
        verb = {
            "view": "Read",
            "create": "Create",
            "str_replace": "Edit",
            "insert": "Insert into",
            "undo_edit": "Undo the last edit of",
        }[inner.command]
        return f"{verb} {inner.path}"
    if isinstance(inner, TaskTrackerAction):
        return "Update the plan" if inner.command == "plan" else "Read the plan"
    summary = " ".join((action.summary or "").split())
    return _clip(summary, 160) if summary else action.tool_name


def locations_of(action: ActionEvent, working_dir: str) -> list[ToolCallLocation] | None:
    """The file an action reads or edits (absolute), and the line, where it names them."""
    inner = action.action
    if not isinstance(inner, FileEditorAction) or not inner.path:
        return None
    path = Path(inner.path)
    absolute = path if path.is_absolute() else Path(working_dir) / path
    line = None
    if inner.command == "view" and inner.view_range:
        line = inner.view_range[0]
    elif inner.command == "insert" and inner.insert_line is not None:
        line = inner.insert_line + 1
    return [ToolCallLocation(path=str(absolute), line=line)]


def raw_input_of(action: ActionEvent) -> dict[str, Any] | None:
    """The arguments as the model gave them (what a client shows as the call's input)."""
    if action.action is None:
        return None
    return action.action.model_dump(mode="json", exclude={"kind"}, exclude_none=True)


def proposed_content(action: ActionEvent, working_dir: str) -> list[Content] | None:
    """What a tool call shows before it runs: the edit's diff (a command shows as its
    title)."""
    diff = edit_diff(action, working_dir)
    return [diff] if diff is not None else None


def edit_diff(action: ActionEvent, working_dir: str) -> FileEditToolCallContent | None:
    """The diff a file edit makes: the text replaced and its replacement, or the new file."""
    inner = action.action
    if not isinstance(inner, FileEditorAction):
        return None
    locations = locations_of(action, working_dir)
    path = locations[0].path if locations else inner.path
    if inner.command == "create" and inner.file_text is not None:
        return FileEditToolCallContent(
            type="diff", path=path, old_text=None, new_text=inner.file_text
        )
    if inner.command == "str_replace" and inner.old_str is not None:
        return FileEditToolCallContent(
            type="diff", path=path, old_text=inner.old_str, new_text=inner.new_str or ""
        )
    if inner.command == "insert" and inner.new_str is not None:
        return FileEditToolCallContent(type="diff", path=path, old_text="", new_text=inner.new_str)
    return None


def text_content(text: str) -> ContentToolCallContent:
    """A tool call's content: text (Markdown)."""
    return ContentToolCallContent(type="content", content=TextContentBlock(type="text", text=text))


def result_of(
    action: ActionEvent | None, observation: ObservationEvent, working_dir: str
) -> tuple[Literal["completed", "failed"], list[Content]]:
    """How a tool call ended and what to show: the command's output, the edit's diff, or
    the tool's text."""
    inner = observation.observation
    failed = inner.is_error
    content: list[Content] = []
    if isinstance(inner, TerminalObservation):
        failed = failed or inner.exit_code not in (0, None) or inner.timed_out
        output = _tail(inner.text)
        if output.strip():
            content.append(text_content(fenced(output)))
    elif isinstance(inner, FileEditorObservation) and inner.command != "view" and not failed:
        diff = edit_diff(action, working_dir) if action is not None else None
        if diff is not None:
            content.append(diff)
        elif inner.diff:
            content.append(text_content(fenced(_tail(inner.diff), "diff")))
    elif isinstance(inner, TaskTrackerObservation):
        pass  # the plan goes out as a plan update
    else:
        text = _tail(inner.text)
        if text.strip():
            content.append(text_content(fenced(text) if not failed else text))
    return ("failed" if failed else "completed"), content


def plan_entries(
    action: ActionEvent | None, observation: ObservationEvent
) -> list[PlanEntry] | None:
    """The task tracker's tasks as the protocol's plan (None: not the task tracker's)."""
    inner = observation.observation
    if not isinstance(inner, TaskTrackerObservation) or inner.is_error:
        return None
    status = {"todo": "pending", "in_progress": "in_progress", "done": "completed"}
    return [
        PlanEntry(content=task.title, priority="medium", status=status[task.status])
        for task in inner.task_list
    ]


def fenced(text: str, language: str = "") -> str:
    """`text` in a Markdown code fence longer than any run of backticks inside it."""
    longest = 0
    run = 0
    for char in text:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text.rstrip()}\n{fence}"


def _tail(text: str) -> str:
    if len(text) <= MAX_OUTPUT_CHARS:
        return text
    return "…(the start is cut)\n" + text[-MAX_OUTPUT_CHARS:]


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
