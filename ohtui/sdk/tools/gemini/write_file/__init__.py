"""The Gemini-style `write_file` tool."""

from ohtui.sdk.tool.registry import register_tool
from ohtui.sdk.tools.gemini.write_file.definition import (
    WriteFileAction,
    WriteFileObservation,
    WriteFileTool,
)
from ohtui.sdk.tools.gemini.write_file.impl import WriteFileExecutor

register_tool(WriteFileTool.name, WriteFileTool)

__all__ = ["WriteFileAction", "WriteFileExecutor", "WriteFileObservation", "WriteFileTool"]
