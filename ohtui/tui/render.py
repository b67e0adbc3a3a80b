"""Turning engine events into short, theme-aware text for cells and the approval modal.

Colours are theme variables ($error, $success...) in Textual Content, so every theme,
light terminals and NO_COLOR read well. User and model text is never parsed as markup.
"""

from __future__ import annotations

import difflib
from typing import Any

from textual.content import Content

from ohtui.tui.display import plural

RISK_STYLES = {
    "HIGH": "bold $text-error on $error-muted",
    "MEDIUM": "bold $text-warning on $warning-muted",
    "LOW": "bold $text-success on $success-muted",
}
TOOL_ICONS = {"terminal": "$", "file_editor": "✎", "task_tracker": "☰", "think": "…"}
_DIFF_HEADERS = ("--- ", "+++ ", "diff ", "index ", "new file", "deleted file")
COLLAPSED_LINES = 6
DIFF_PREVIEW_LINES = 60


def risk_badge(risk: str) -> Content:
    """HIGH / MEDIUM / LOW as a coloured badge; UNKNOWN as nothing."""
    style = RISK_STYLES.get(risk)
    return Content.styled(f" {risk} ", style) if style else Content("")


def arguments(action_event: Any) -> dict[str, Any]:
    """The action's fields as a dict ({} when the call did not validate)."""
    action = action_event.action
    return action.model_dump(exclude={"kind"}) if action is not None else {}


def action_summary(action_event: Any) -> tuple[str, str]:
    """(one line, full detail) describing what an action does."""
    args = arguments(action_event)
    tool = action_event.tool_name
    if tool == "terminal":
        command = str(args.get("command", "")).strip()
        if args.get("reset"):
            return "reset the terminal", "reset the terminal (kills its processes)"
        first = command.splitlines()[0] if command else ""
        more = " …" if "\n" in command else ""
        return f"{first}{more}", command
    if tool == "file_editor":
        verb = {
            "view": "view",
            "create": "create",
            "str_replace": "edit",
            "insert": "insert into",
            "undo_edit": "undo the last edit of",
        }.get(str(args.get("command")), "edit")
        path = str(args.get("path", ""))
        return f"{verb} {path}", f"{verb} {path}"
    if tool == "task_tracker":
        count = len(args.get("task_list") or [])
        text = "view the plan" if args.get("command") == "view" else f"plan {plural(count, 'task')}"
        return text, text
    if tool == "think":
        thought = str(args.get("thought", ""))
        return thought.splitlines()[0] if thought else "think", thought
    if tool == "finish":
        message = str(args.get("message", ""))
        return "finish", message
    raw = action_event.tool_call.arguments
    line = raw if len(raw) <= 120 else raw[:119] + "…"
    return line, raw


def edit_preview(action_event: Any) -> str | None:
    """A unified diff of what a file edit would change, before it runs (None otherwise)."""
    if action_event.tool_name != "file_editor":
        return None
    args = arguments(action_event)
    path = str(args.get("path", "file"))
    command = args.get("command")
    if command == "create":
        old, new = "", str(args.get("file_text") or "")
    elif command == "str_replace":
        old, new = str(args.get("old_str") or ""), str(args.get("new_str") or "")
    elif command == "insert":
        old, new = "", str(args.get("new_str") or "")
        path = f"{path} (after line {args.get('insert_line')})"
    else:
        return None
    lines = difflib.unified_diff(
        old.splitlines(keepends=True),
        new.splitlines(keepends=True),
        fromfile=f"a/{path}",
        tofile=f"b/{path}",
        lineterm="",
    )
    return "\n".join(line.rstrip("\n") for line in lines) or None


def diff_content(diff: str, max_lines: int | None = None, indent: int = 0) -> Content:
    """A unified diff coloured: additions, removals, hunks and headers."""
    lines = diff.splitlines()
    hidden = 0
    if max_lines is not None and len(lines) > max_lines:
        hidden = len(lines) - max_lines
        lines = lines[:max_lines]
    parts: list[Content] = []
    in_hunk = False
    for line in lines:
        if line.startswith("diff "):
            in_hunk = False
        if not in_hunk and line.startswith(_DIFF_HEADERS):
            style = "bold"  # inside a hunk, "--- x" is a removed line "-- x"
        elif line.startswith("@@"):
            in_hunk = True
            style = "$text-accent"
        elif line.startswith("+"):
            style = "$text-success"
        elif line.startswith("-"):
            style = "$text-error"
        else:
            style = "$foreground-muted"
        parts.append(Content.styled(" " * indent + line, style))
    if hidden:
        parts.append(Content.styled(f"{' ' * indent}… {plural(hidden, 'more line')}", "italic dim"))
    return Content("\n").join(parts)


def clip_lines(text: str, limit: int) -> tuple[str, int]:
    """The first `limit` lines of text, and how many lines were left out."""
    lines = text.splitlines()
    if len(lines) <= limit:
        return text, 0
    return "\n".join(lines[:limit]), len(lines) - limit
