"""The `glob` tool: find the workspace's files by a name pattern."""

from ohtui.sdk.tool.registry import register_tool
from ohtui.sdk.tools.glob.definition import GlobAction, GlobObservation, GlobTool
from ohtui.sdk.tools.glob.impl import GlobExecutor

register_tool(GlobTool.name, GlobTool)

__all__ = ["GlobAction", "GlobExecutor", "GlobObservation", "GlobTool"]
