"""The Gemini-style `edit` tool: replace text in a file (or create one)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Self

from pydantic import Field

from ohtui.sdk.tool.schema import Action
from ohtui.sdk.tool.tool import ToolDefinition
from ohtui.sdk.tools.gemini.base import create_for_workspace
from ohtui.sdk.tools.gemini.file_change import FileChangeObservation

if TYPE_CHECKING:
    from ohtui.sdk.conversation.state import ConversationState


class EditAction(Action):
    """A find-and-replace in one file."""

    file_path: str = Field(
        description="The file to change: absolute, or relative to the workspace."
    )
    old_string: str = Field(
        description="The exact text to replace, whitespace and indentation included. An "
        "empty string creates the file with `new_string` as its content."
    )
    new_string: str = Field(description="The text to put in its place.")
    expected_replacements: int = Field(
        default=1,
        ge=0,
        description="How many times `old_string` occurs (all are replaced); the edit fails "
        "if the file holds another number. Defaults to 1.",
    )


class EditObservation(FileChangeObservation):
    """The file edited."""

    replacements_made: int = Field(default=0, description="How many replacements were made.")

    def change_summary(self) -> str:
        """The line shown above the diff."""
        return f"Edited: {self.file_path} ({self.replacements_made} replacement(s))"


TOOL_DESCRIPTION = """Replace text in a file of the workspace.
* `old_string` must match the file exactly (whitespace and indentation included): read the \
file first, and include 3-5 lines of context so it is unique.
* It replaces `expected_replacements` occurrences (1 by default); a different count fails \
and changes nothing.
* An empty `old_string` creates a new file whose content is `new_string`.
* For a change of most of a file, use `write_file`.
Examples: edit(file_path="app.py", old_string="x = 1", new_string="x = 2"); \
edit(file_path="new.py", old_string="", new_string="print('hi')\\n")"""


class EditTool(ToolDefinition[EditAction, EditObservation]):
    """The `edit` tool."""

    @classmethod
    def create(cls, conv_state: ConversationState | None = None, **params: Any) -> Sequence[Self]:
        """One edit tool for the conversation's workspace; it takes no parameters."""
        from ohtui.sdk.tools.gemini.edit.impl import EditExecutor

        return create_for_workspace(
            cls,
            conv_state,
            params,
            description=TOOL_DESCRIPTION,
            action_type=EditAction,
            observation_type=EditObservation,
            executor=EditExecutor,
            read_only=False,
        )
