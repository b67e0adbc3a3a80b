"""Turning engine events into short, theme-aware text for cells, the picker and the approval
modal: per-tool summaries and the one diff renderer, chosen by the engine's types.

It imports the engine at its top, so it is only imported once the engine has loaded (by the
cell factory, the approval modal, the picker), never on the way to the first frame.
Colours are theme variables ($error, $success...) in Textual Content, so every theme,
light terminals and NO_COLOR read well. User and model text is never parsed as markup.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import singledispatch

from textual.content import Content

from ohtui.sdk.event import ActionEvent
from ohtui.sdk.mcp.definition import MCPToolAction
from ohtui.sdk.tool import Action
from ohtui.sdk.tool.builtins import FinishAction, ThinkAction
from ohtui.sdk.tools.file_editor import FileEditorAction
from ohtui.sdk.tools.file_editor.render import DiffLine, diff_lines, unified_diff
from ohtui.sdk.tools.task_tracker import TaskTrackerAction
from ohtui.sdk.tools.terminal import TerminalAction
from ohtui.tui.display import more_lines, plural

RISK_STYLES = {
    "HIGH": "bold $text-error on $error-muted",
    "MEDIUM": "bold $text-warning on $warning-muted",
    "LOW": "bold $text-success on $success-muted",
}
TOOL_ICONS = {"terminal": "$", "file_editor": "✎", "task_tracker": "☰", "think": "…"}
DIFF_STYLES = {
    DiffLine.HEADER: "bold",
    DiffLine.HUNK: "$text-accent",
    DiffLine.ADDED: "$text-success",
    DiffLine.REMOVED: "$text-error",
    DiffLine.CONTEXT: "$foreground-muted",
}
"""The engine's diff line kinds in theme colours."""
_EDIT_VERBS = {
    "view": "view",
    "create": "create",
    "str_replace": "edit",
    "insert": "insert into",
    "undo_edit": "undo the last edit of",
}


def risk_badge(risk: str) -> Content:
    """HIGH / MEDIUM / LOW as a coloured badge; UNKNOWN as nothing."""
    style = RISK_STYLES.get(risk)
    return Content.styled(f" {risk} ", style) if style else Content("")


def action_summary(action_event: ActionEvent) -> tuple[str, str]:
    """(one line, full detail) describing what an action does."""
    return _summary(action_event.action, action_event)


@singledispatch
def _summary(action: Action | None, event: ActionEvent) -> tuple[str, str]:
    """Any other tool (MCP tools, or arguments that did not validate): its raw arguments."""
    raw = event.tool_call.arguments
    line = raw if len(raw) <= 120 else raw[:119] + "…"
    return line, raw


@_summary.register
def _(action: MCPToolAction, event: ActionEvent) -> tuple[str, str]:
    line = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in action.data.items())
    line = line if len(line) <= 120 else line[:119] + "…"
    detail = json.dumps(action.data, indent=2, ensure_ascii=False) if action.data else ""
    return line, f"{action.server}/{action.tool}\n{detail}".rstrip()


@_summary.register
def _(action: TerminalAction, event: ActionEvent) -> tuple[str, str]:
    if action.reset:
        return "reset the terminal", "reset the terminal (kills its processes)"
    command = action.command.strip()
    first = command.splitlines()[0] if command else ""
    more = " …" if "\n" in command else ""
    return f"{first}{more}", command


@_summary.register
def _(action: FileEditorAction, event: ActionEvent) -> tuple[str, str]:
    text = f"{_EDIT_VERBS.get(action.command, 'edit')} {action.path}"
    return text, text


@_summary.register
def _(action: TaskTrackerAction, event: ActionEvent) -> tuple[str, str]:
    count = len(action.task_list)
    text = "view the plan" if action.command == "view" else f"plan {plural(count, 'task')}"
    return text, text


@_summary.register
def _(action: ThinkAction, event: ActionEvent) -> tuple[str, str]:
    thought = action.thought
    return thought.splitlines()[0] if thought.strip() else "think", thought


@_summary.register
def _(action: FinishAction, event: ActionEvent) -> tuple[str, str]:
    return "finish", action.message


def edit_preview(action_event: ActionEvent) -> str | None:
    """A unified diff of what a file edit would change, before it runs (None otherwise)."""
    action = action_event.action
    if not isinstance(action, FileEditorAction):
        return None
    path = action.path
    if action.command == "create":
        diff = unified_diff(None, action.file_text or "", path)
    elif action.command == "str_replace":
        diff = unified_diff(_lines(action.old_str), _lines(action.new_str), path)
    elif action.command == "insert":
        where = f"{path} (after line {action.insert_line})"
        diff = unified_diff("", _lines(action.new_str), where)
    else:
        return None
    return diff.rstrip("\n") or None


def _lines(snippet: str | None) -> str:
    """A snippet of a file as whole lines: its end is not the file's, so no end-of-file note."""
    text = snippet or ""
    return text if not text or text.endswith("\n") else text + "\n"


def diff_content(diff: str, max_lines: int | None = None, indent: int = 0) -> Content:
    """A unified diff coloured by the engine's reading of it: headers, hunks, +/- lines."""
    lines = list(diff_lines(diff))
    hidden = 0
    if max_lines is not None and len(lines) > max_lines:
        hidden = len(lines) - max_lines
        lines = lines[:max_lines]
    pad = " " * indent
    shown = styled_diff_lines(lines, indent)
    if hidden:
        more = Content.styled(f"{pad}… {more_lines(hidden)}", "italic dim")
        return Content("\n").join([shown, more]) if lines else more
    return shown


def styled_diff_lines(lines: Sequence[tuple[DiffLine, str]], indent: int = 0) -> Content:
    """Lines of a diff as `diff_lines` read them, coloured: a long diff drawn a part at a
    time (read whole once, so a hunk's `--- ` line is never taken for a header)."""
    pad = " " * indent
    return Content("\n").join(Content.styled(pad + line, DIFF_STYLES[kind]) for kind, line in lines)
