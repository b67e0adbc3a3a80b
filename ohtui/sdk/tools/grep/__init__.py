"""The `grep` tool: find the workspace's files by their content."""

from ohtui.sdk.tool.registry import register_tool
from ohtui.sdk.tools.grep.definition import GrepAction, GrepObservation, GrepTool
from ohtui.sdk.tools.grep.impl import GrepExecutor

register_tool(GrepTool.name, GrepTool)

__all__ = ["GrepAction", "GrepExecutor", "GrepObservation", "GrepTool"]
