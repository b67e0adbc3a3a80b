"""Tools: typed actions and observations, tool definitions, executors and their registry."""

from ohtui.sdk.tool.client_tool import ClientTool, ClientToolSpec
from ohtui.sdk.tool.registry import (
    list_registered_tools,
    list_usable_tools,
    register_tool,
    resolve_tool,
)
from ohtui.sdk.tool.schema import Action, Observation, Schema
from ohtui.sdk.tool.spec import Tool
from ohtui.sdk.tool.tool import (
    DeclaredResources,
    ExecutableTool,
    ToolAnnotations,
    ToolArgumentError,
    ToolDefinition,
    ToolExecutor,
)

__all__ = [
    "Action",
    "ClientTool",
    "ClientToolSpec",
    "DeclaredResources",
    "ExecutableTool",
    "Observation",
    "Schema",
    "Tool",
    "ToolAnnotations",
    "ToolArgumentError",
    "ToolDefinition",
    "ToolExecutor",
    "list_registered_tools",
    "list_usable_tools",
    "register_tool",
    "resolve_tool",
]
