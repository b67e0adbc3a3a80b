"""The registry of tools by name, resolving `Tool` specs into ToolDefinitions."""

from __future__ import annotations

import importlib
import inspect
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

from ohtui.sdk.tool.spec import Tool
from ohtui.sdk.tool.tool import ToolDefinition
from ohtui.sdk.utils.models import register_kind_loader

if TYPE_CHECKING:
    from ohtui.sdk.conversation.state import ConversationState

    Registered: TypeAlias = type[ToolDefinition[Any, Any]] | ToolDefinition[Any, Any]
    """A ToolDefinition subclass (created per conversation) or a shared instance."""

# Built-in tools are imported only when a conversation asks for them, so that
# `import ohtui.sdk` stays cheap. (`_REG` and `_MODULE_QUALNAMES` are the SDK's names: its
# tests save and restore them around registrations.)
_MODULE_QUALNAMES: dict[str, str] = {
    "terminal": "ohtui.sdk.tools.terminal",
    "file_editor": "ohtui.sdk.tools.file_editor",
    "task_tracker": "ohtui.sdk.tools.task_tracker",
}
"""The module defining each built-in tool, imported when a conversation first asks for it."""

_REG: dict[str, Registered] = {}
"""Every registered tool by name: a ToolDefinition subclass or a shared instance."""
_lock = threading.Lock()


def _import_builtin_tools() -> None:
    # A resumed conversation's events name the built-in tools' observation classes before
    # any tool has been created; import them so those events can be read.
    for module in _MODULE_QUALNAMES.values():
        importlib.import_module(module)


register_kind_loader(_import_builtin_tools)


def register_tool(name: str, tool: Registered) -> None:
    """Register a tool under `name`.

    `tool` is a ToolDefinition subclass, whose `create(conv_state, **params)` builds the
    tools of each conversation, or a ready instance shared by every conversation.
    """
    if not name:
        raise ValueError("a tool needs a non-empty name")
    if not (
        isinstance(tool, ToolDefinition)
        or (inspect.isclass(tool) and issubclass(tool, ToolDefinition))
    ):
        raise TypeError(
            f"register_tool only accepts a ToolDefinition subclass or instance; '{name}' got "
            f"{tool!r}. Turn a factory function into the create() classmethod of a subclass."
        )
    with _lock:
        _REG[name] = tool


def list_registered_tools() -> list[str]:
    """The names of all tools that can be resolved, built-ins included."""
    with _lock:
        return sorted(set(_REG) | set(_MODULE_QUALNAMES))


def list_usable_tools() -> list[str]:
    """The registered tools that can run here (see `ToolDefinition.is_usable`)."""
    with _lock:
        registered = dict(_REG)
    # Built-ins not imported yet run wherever ohtui does.
    usable = {name for name in _MODULE_QUALNAMES if name not in registered}
    for name, tool in registered.items():
        if (tool if inspect.isclass(tool) else type(tool)).is_usable():
            usable.add(name)
    return sorted(usable)


def resolve_tool(spec: Tool, conv_state: ConversationState) -> Sequence[ToolDefinition[Any, Any]]:
    """Create the ToolDefinitions a spec names, for one conversation."""
    with _lock:
        tool = _REG.get(spec.name)
    if tool is None and spec.name in _MODULE_QUALNAMES:
        importlib.import_module(_MODULE_QUALNAMES[spec.name])  # registers itself
        with _lock:
            tool = _REG.get(spec.name)
    if tool is None:
        known = ", ".join(list_registered_tools())
        raise ValueError(f"no tool registered as '{spec.name}' (known tools: {known})")
    params = dict(spec.params)
    # Any tool may be given a response schema: it is the registry's to apply, not create()'s.
    response_schema = params.pop("response_schema", None)
    if isinstance(tool, ToolDefinition):
        if params:
            raise ValueError(
                f"tool '{spec.name}' is registered as a ready instance and takes no parameters "
                f"but response_schema, got {sorted(params)}"
            )
        tools: Sequence[ToolDefinition[Any, Any]] = [tool]
    else:
        tools = tool.create(conv_state, **params)
    if response_schema is None:
        return tools
    if len(tools) != 1:
        raise ValueError(
            f"tool '{spec.name}' makes {len(tools)} tools; a response_schema needs a spec "
            "that makes exactly one"
        )
    return [tools[0].set_response_schema(response_schema)]
