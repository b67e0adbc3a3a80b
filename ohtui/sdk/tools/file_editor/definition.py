"""The `file_editor` tool's definition; its action and observation live in `actions`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Self

from ohtui.sdk.tool.tool import ToolAnnotations, ToolDefinition
from ohtui.sdk.tools.file_editor.actions import (  # noqa: F401 - re-exported at the old path
    Command,
    FileEditorAction,
    FileEditorObservation,
)
from ohtui.sdk.tools.file_editor.editor import FileEditorExecutor

if TYPE_CHECKING:
    from ohtui.sdk.conversation.state import ConversationState


FILE_EDITOR_DESCRIPTION = """View, create and edit text files.
* `view`: a file's content with line numbers (like `cat -n`); pass `view_range` for part of a \
long file. For a directory: its files and subdirectories up to 2 levels deep, hidden ones and \
bulky ones such as node_modules left out.
* `create`: write a new file with `file_text` (parent directories are created). It fails if the \
path exists: change existing files with `str_replace` or `insert`.
* `str_replace`: replace `old_str` with `new_str`. `old_str` must match exactly one place in the \
file, character for character including indentation and whitespace, so include enough \
surrounding lines to make it unique. An empty `new_str` deletes `old_str`.
* `insert`: insert `new_str` after line `insert_line` (0 inserts at the top of the file).
* `undo_edit`: revert the last change this tool made to `path` (undoing a `create` deletes \
the file).
Paths are absolute or relative to the workspace ({working_dir}). View a file before editing it, \
and check the snippet each edit returns. Only regular UTF-8 text files up to 10 MB can be \
viewed or edited (no devices, pipes or sockets); use the terminal for anything else."""


class FileEditorTool(ToolDefinition[FileEditorAction, FileEditorObservation]):
    """The built-in `file_editor` tool."""

    @classmethod
    def create(cls, conv_state: ConversationState | None = None, **params: Any) -> Sequence[Self]:
        """One editor for the conversation's workspace; it takes no parameters."""
        if conv_state is None:
            raise ValueError(
                "FileEditorTool.create() needs the conversation's state (conv_state): it edits "
                "that workspace. Or name it in the agent's tools: Tool(name='file_editor')."
            )
        if params:
            raise ValueError(f"file_editor takes no parameters, got {sorted(params)}")
        working_dir = conv_state.workspace.working_dir
        return [
            cls(
                description=FILE_EDITOR_DESCRIPTION.format(working_dir=working_dir),
                action_type=FileEditorAction,
                observation_type=FileEditorObservation,
                annotations=ToolAnnotations(
                    title="file_editor",
                    readOnlyHint=False,
                    destructiveHint=False,
                    idempotentHint=False,
                    openWorldHint=False,
                ),
                executor=FileEditorExecutor(
                    working_dir, sandbox=lambda: getattr(conv_state, "sandbox", None)
                ),
            )
        ]
