"""Which actions may change the workspace, and so get a checkpoint before they run."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ohtui.sdk.event.llm_convertible.action import ActionEvent

CONVERSATION_ONLY = frozenset({"finish", "think", "task_tracker"})
"""Tools that change nothing outside the conversation."""
FILE_EDITORS = frozenset({"file_editor", "planning_file_editor"})
"""ohtui's file editor and the tools built on it: `view` reads, every other command writes."""
CONFINED_WRITERS = FILE_EDITORS | {"apply_patch", "write_file", "edit"}
"""Tools that write only files, through the file editor's handles, inside the workspace (or
the sandbox): a checkpoint taken before them undoes what they do."""


def changes_workspace(action: ActionEvent, read_only_tool: bool) -> bool:
    """Whether the action may change the workspace: anything but a read-only tool, a
    conversation-only tool, a file view and a command line ohtui shows only reads."""
    if read_only_tool or action.tool_name in CONVERSATION_ONLY or action.action is None:
        return False
    command = getattr(action.action, "command", None)
    if action.tool_name in FILE_EDITORS:
        return command != "view"
    if action.tool_name == "terminal" and isinstance(command, str):
        from ohtui.sdk.security.shell import only_reads, parse_command

        return not only_reads(parse_command(command))
    return True


_PATCH_PATH = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$|^\*\*\* Move to: (.+)$", re.M)


def written_paths(tool_name: str, arguments: dict[str, Any]) -> list[str]:
    """The files a call of one of the other file-writing tools writes (apply_patch, the
    Gemini-style write_file and edit); empty for any other call."""
    if tool_name in ("write_file", "edit") and isinstance(arguments.get("file_path"), str):
        return [arguments["file_path"]]
    if tool_name == "apply_patch" and isinstance(arguments.get("patch"), str):
        return [(a or b).strip() for a, b in _PATCH_PATH.findall(arguments["patch"])]
    return []
