"""The Gemini-style `list_directory` tool: a folder's entries with their size and time."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Self

from pydantic import BaseModel, Field

from ohtui.sdk.tool.schema import Action, Observation
from ohtui.sdk.tool.tool import ToolDefinition
from ohtui.sdk.tools.gemini.base import create_for_workspace

if TYPE_CHECKING:
    from ohtui.sdk.conversation.state import ConversationState

MAX_ENTRIES = 500
"""Entries listed at most, so one folder cannot flood the context."""


class FileEntry(BaseModel):
    """One file or folder."""

    name: str = Field(description="Its name.")
    path: str = Field(description="Its absolute path.")
    is_directory: bool = Field(description="Whether it is a folder.")
    size: int = Field(description="Its size in bytes (0 for a folder).")
    modified_time: datetime = Field(description="When it was last modified.")


class ListDirectoryAction(Action):
    """A folder to list."""

    dir_path: str = Field(
        default=".", description="The folder: absolute, or relative to the workspace."
    )
    recursive: bool = Field(
        default=False, description="Whether to list subfolders too (two levels deep)."
    )


class ListDirectoryObservation(Observation):
    """A folder's entries."""

    dir_path: str | None = Field(default=None, description="The folder listed.")
    entries: list[FileEntry] = Field(default_factory=list, description="Its entries.")
    total_count: int = Field(default=0, description="How many entries are listed.")
    is_truncated: bool = Field(
        default=False, description="Whether the listing stopped at its limit."
    )


TOOL_DESCRIPTION = f"""List a folder of the workspace: each file and subfolder with its \
size and modification time, hidden ones included.
`recursive=True` lists subfolders too, two levels deep; links are listed, not followed. At \
most {MAX_ENTRIES} entries.
Examples: list_directory(); list_directory(dir_path="src", recursive=True)"""


class ListDirectoryTool(ToolDefinition[ListDirectoryAction, ListDirectoryObservation]):
    """The `list_directory` tool (read-only)."""

    @classmethod
    def create(cls, conv_state: ConversationState | None = None, **params: Any) -> Sequence[Self]:
        """One list_directory tool for the conversation's workspace; it takes no parameters."""
        from ohtui.sdk.tools.gemini.list_directory.impl import ListDirectoryExecutor

        return create_for_workspace(
            cls,
            conv_state,
            params,
            description=TOOL_DESCRIPTION,
            action_type=ListDirectoryAction,
            observation_type=ListDirectoryObservation,
            executor=ListDirectoryExecutor,
            read_only=True,
        )
