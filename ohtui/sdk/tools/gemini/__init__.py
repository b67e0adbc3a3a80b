"""Gemini-style file tools: read_file, write_file, edit and list_directory, in place of the
one file_editor (`*GEMINI_FILE_TOOLS` in an agent's tools). They work inside the workspace
only, through the file editor's confined handles."""

from ohtui.sdk.tool.spec import Tool
from ohtui.sdk.tools.gemini.edit import EditAction, EditObservation, EditTool
from ohtui.sdk.tools.gemini.list_directory import (
    ListDirectoryAction,
    ListDirectoryObservation,
    ListDirectoryTool,
)
from ohtui.sdk.tools.gemini.read_file import ReadFileAction, ReadFileObservation, ReadFileTool
from ohtui.sdk.tools.gemini.write_file import (
    WriteFileAction,
    WriteFileObservation,
    WriteFileTool,
)

GEMINI_FILE_TOOLS: list[Tool] = [
    Tool(name=ReadFileTool.name),
    Tool(name=WriteFileTool.name),
    Tool(name=EditTool.name),
    Tool(name=ListDirectoryTool.name),
]
"""The four tools by name, to put in an agent's tools instead of Tool(name="file_editor")."""

__all__ = [
    "GEMINI_FILE_TOOLS",
    "EditAction",
    "EditObservation",
    "EditTool",
    "ListDirectoryAction",
    "ListDirectoryObservation",
    "ListDirectoryTool",
    "ReadFileAction",
    "ReadFileObservation",
    "ReadFileTool",
    "WriteFileAction",
    "WriteFileObservation",
    "WriteFileTool",
]
