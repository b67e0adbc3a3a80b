"""The `file_editor` tool's action and observation (its executor and definition build on them)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field

from ohtui.sdk.tool.schema import Action, Observation
from ohtui.sdk.tools.file_editor.render import diff_lines
from ohtui.sdk.utils.text import plural

if TYPE_CHECKING:
    from rich.text import Text


Command = Literal["view", "create", "str_replace", "insert", "undo_edit"]


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
