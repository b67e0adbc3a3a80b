"""The `file_editor` tool's action, observation and definition."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, Self

from pydantic import Field

from ohtui.sdk.tool.schema import Action, Observation
from ohtui.sdk.tool.tool import ToolAnnotations, ToolDefinition
from ohtui.sdk.tools.file_editor.render import diff_lines
from ohtui.sdk.utils.text import plural

if TYPE_CHECKING:
    from rich.text import Text

    from ohtui.sdk.conversation.state import ConversationState

Command = Literal["view", "create", "str_replace", "insert", "undo_edit"]

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


class FileEditorAction(Action):
    """One file_editor command."""

    command: Command = Field(
        description="The command to run: view, create, str_replace, insert or undo_edit."
    )
    path: str = Field(
        description="The file or directory: an absolute path or one relative to the workspace."
    )
    file_text: str | None = Field(
        default=None, description="For `create`: the whole content of the new file."
    )
    old_str: str | None = Field(
        default=None,
        description="For `str_replace`: the exact text to replace; it must occur exactly once.",
    )
    new_str: str | None = Field(
        default=None,
        description="For `str_replace`: the replacement (empty to delete `old_str`). "
        "For `insert`: the text to insert.",
    )
    insert_line: int | None = Field(
        default=None,
        description="For `insert`: the line number after which `new_str` goes; 0 = the top.",
    )
    view_range: list[int] | None = Field(
        default=None,
        description="For `view` of a file: [start, end] line numbers, 1-based and inclusive; "
        "end -1 means to the end of the file.",
    )

    @property
    def visualize(self) -> Text:
        """The command and path, without the (possibly long) text arguments."""
        from rich.text import Text

        text = Text()
        text.append(self.command, style="bold")
        text.append(f" {self.path}")
        if self.command == "view" and self.view_range:
            text.append(f" lines {self.view_range}", style="dim")
        elif self.command == "create" and self.file_text is not None:
            text.append(f" ({plural(len(self.file_text.splitlines()), 'line')})", style="dim")
        elif self.command == "insert" and self.insert_line is not None:
            text.append(f" after line {self.insert_line}", style="dim")
        return text


class FileEditorObservation(Observation):
    """The result of a file_editor command; edits carry a unified diff of the change."""

    command: Command = Field(description="The command that ran.")
    path: str | None = Field(default=None, description="The absolute path it ran on.")
    prev_exist: bool = Field(default=False, description="Whether the path existed before.")
    diff: str | None = Field(
        default=None, description="A unified diff of the change; None for view and errors."
    )

    @property
    def visualize(self) -> Text:
        """The diff coloured like `git diff` for edits; the text otherwise."""
        from rich.text import Text

        if self.is_error or not self.diff:
            return super().visualize
        text = Text()
        for kind, line in diff_lines(self.diff):
            text.append(line + "\n", style=kind.value)
        return text


class FileEditorTool(ToolDefinition[FileEditorAction, FileEditorObservation]):
    """The built-in `file_editor` tool."""

    @classmethod
    def create(cls, conv_state: ConversationState | None = None, **params: Any) -> Sequence[Self]:
        """One editor for the conversation's workspace; it takes no parameters."""
        # editor.py imports this module for the action and observation types.
        from ohtui.sdk.tools.file_editor.editor import FileEditorExecutor

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
