"""The Gemini-style `read_file` tool."""

from ohtui.sdk.tool.registry import register_tool
from ohtui.sdk.tools.gemini.read_file.definition import (
    ReadFileAction,
    ReadFileObservation,
    ReadFileTool,
)
from ohtui.sdk.tools.gemini.read_file.impl import ReadFileExecutor

register_tool(ReadFileTool.name, ReadFileTool)

__all__ = ["ReadFileAction", "ReadFileExecutor", "ReadFileObservation", "ReadFileTool"]
