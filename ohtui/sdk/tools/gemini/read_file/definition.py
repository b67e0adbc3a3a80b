"""The Gemini-style `read_file` tool: a text file of the workspace, a page of lines at a time."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Self

from pydantic import Field

from ohtui.sdk.tool.schema import Action, Observation
from ohtui.sdk.tool.tool import ToolDefinition
from ohtui.sdk.tools.gemini.base import create_for_workspace

if TYPE_CHECKING:
    from ohtui.sdk.conversation.state import ConversationState

MAX_LINES_PER_READ = 1000
"""Lines shown by one call without a `limit`, so one file cannot flood the context."""


class ReadFileAction(Action):
    """A file to read, optionally a page of it."""

    file_path: str = Field(description="The file to read: absolute, or relative to the workspace.")
    offset: int | None = Field(
        default=None, ge=0, description="Optional: the 0-based line to start at, to page."
    )
    limit: int | None = Field(
        default=None, ge=1, description="Optional: at most this many lines (with `offset`)."
    )


class ReadFileObservation(Observation):
    """The lines read, numbered."""

    file_path: str = Field(default="", description="The file read.")
    file_content: str = Field(default="", description="The lines read, numbered from 1.")
    is_truncated: bool = Field(default=False, description="Whether lines are left to read.")
    lines_shown: tuple[int, int] | None = Field(
        default=None, description="The lines shown (first, last; from 1) when not all were."
    )
    total_lines: int | None = Field(default=None, description="The file's number of lines.")


TOOL_DESCRIPTION = """Read a text file of the workspace, with line numbers.
A long file is shown {max_lines} lines at a time: the answer says so and how to read on \
with `offset` (the 0-based line to start at) and `limit` (how many lines).
Examples: read_file(file_path="src/app.py"); read_file(file_path="src/app.py", offset=100, \
limit=50)."""


class ReadFileTool(ToolDefinition[ReadFileAction, ReadFileObservation]):
    """The `read_file` tool (read-only)."""

    @classmethod
    def create(cls, conv_state: ConversationState | None = None, **params: Any) -> Sequence[Self]:
        """One read_file tool for the conversation's workspace; it takes no parameters."""
        from ohtui.sdk.tools.gemini.read_file.impl import ReadFileExecutor

        return create_for_workspace(
            cls,
            conv_state,
            params,
            description=TOOL_DESCRIPTION.format(max_lines=MAX_LINES_PER_READ),
            action_type=ReadFileAction,
            observation_type=ReadFileObservation,
            executor=ReadFileExecutor,
            read_only=True,
        )
