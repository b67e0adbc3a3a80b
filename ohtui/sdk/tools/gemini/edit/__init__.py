"""The Gemini-style `edit` tool."""

from ohtui.sdk.tool.registry import register_tool
from ohtui.sdk.tools.gemini.edit.definition import EditAction, EditObservation, EditTool
from ohtui.sdk.tools.gemini.edit.impl import EditExecutor

register_tool(EditTool.name, EditTool)

__all__ = ["EditAction", "EditExecutor", "EditObservation", "EditTool"]
