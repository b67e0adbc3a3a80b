"""The Gemini-style `write_file` tool: a file's whole content, created or replaced."""

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


class WriteFileAction(Action):
    """A file and its new content."""

    file_path: str = Field(description="The file to write: absolute, or relative to the workspace.")
    content: str = Field(description="The whole new content of the file.")


class WriteFileObservation(FileChangeObservation):
    """The file written."""


TOOL_DESCRIPTION = """Write a file of the workspace: create it (and its folders), or replace \
all of its content.
For a small change to an existing file, prefer `edit`, which replaces only the text you name.
Example: write_file(file_path="src/new.py", content="print('hello')\\n")"""


class WriteFileTool(ToolDefinition[WriteFileAction, WriteFileObservation]):
    """The `write_file` tool."""

    @classmethod
    def create(cls, conv_state: ConversationState | None = None, **params: Any) -> Sequence[Self]:
        """One write_file tool for the conversation's workspace; it takes no parameters."""
        from ohtui.sdk.tools.gemini.write_file.impl import WriteFileExecutor

        return create_for_workspace(
            cls,
            conv_state,
            params,
            description=TOOL_DESCRIPTION,
            action_type=WriteFileAction,
            observation_type=WriteFileObservation,
            executor=WriteFileExecutor,
            read_only=False,
        )
