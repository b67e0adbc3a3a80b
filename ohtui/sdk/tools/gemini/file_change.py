"""What the Gemini-style tools that write files (write_file, edit) report: the file, whether
it is new, and its content before and after, shown as a diff."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import Field

from ohtui.sdk.tool.schema import Observation

if TYPE_CHECKING:
    from rich.text import Text


class FileChangeObservation(Observation):
    """A file created or rewritten."""

    file_path: str | None = Field(default=None, description="The file written.")
    is_new_file: bool = Field(default=False, description="Whether the file was created.")
    old_content: str | None = Field(
        default=None, description="The content before (None for a new file)."
    )
    new_content: str | None = Field(default=None, description="The content after.")

    def change_summary(self) -> str:
        """The line shown above the diff of a changed file."""
        return f"Updated: {self.file_path}"

    @property
    def diff(self) -> str:
        """The change as a unified diff (empty for an error)."""
        from ohtui.sdk.tools.file_editor.render import unified_diff

        if self.is_error or not self.file_path or self.new_content is None:
            return ""
        return unified_diff(self.old_content, self.new_content, self.file_path.lstrip("/"))

    @property
    def visualize(self) -> Text:
        """What happened to the file, then the diff coloured like `git diff`."""
        from rich.text import Text

        from ohtui.sdk.tools.file_editor.render import diff_lines

        if self.is_error or not self.file_path:
            return super().visualize
        text = Text()
        if self.is_new_file:
            text.append(f"Created: {self.file_path}\n", style="green")
        else:
            text.append(self.change_summary() + "\n", style="yellow")
        for kind, line in diff_lines(self.diff):
            text.append(line + "\n", style=kind.value)
        return text
