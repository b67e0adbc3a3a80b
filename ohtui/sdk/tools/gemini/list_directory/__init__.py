"""The Gemini-style `list_directory` tool."""

from ohtui.sdk.tool.registry import register_tool
from ohtui.sdk.tools.gemini.list_directory.definition import (
    FileEntry,
    ListDirectoryAction,
    ListDirectoryObservation,
    ListDirectoryTool,
)
from ohtui.sdk.tools.gemini.list_directory.impl import ListDirectoryExecutor

register_tool(ListDirectoryTool.name, ListDirectoryTool)

__all__ = [
    "FileEntry",
    "ListDirectoryAction",
    "ListDirectoryExecutor",
    "ListDirectoryObservation",
    "ListDirectoryTool",
]
