"""The registry of tools by name, resolving `Tool` specs into ToolDefinitions."""

from __future__ import annotations

import importlib
import inspect
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, cast

from ohtui.sdk.tool.spec import Tool
from ohtui.sdk.tool.tool import ToolDefinition
from ohtui.sdk.utils.models import register_kind_loader

if TYPE_CHECKING:
    from ohtui.sdk.conversation.state import ConversationState

ToolFactory = Callable[..., Sequence[ToolDefinition[Any, Any]]]
"""Called as factory(conv_state, **params); returns the tools to add."""

# Built-in tools are imported only when a conversation asks for them, so that
# `import ohtui.sdk` stays cheap.
_BUILTIN_MODULES = {
    "terminal": "ohtui.sdk.tools.terminal",
    "file_editor": "ohtui.sdk.tools.file_editor",
    "task_tracker": "ohtui.sdk.tools.task_tracker",
}

_registry: dict[str, ToolFactory] = {}
_lock = threading.Lock()


def _import_builtin_tools() -> None:
    # A resumed conversation's events name the built-in tools' observation classes before
    # any tool has been created; import them so those events can be read.
    for module in _BUILTIN_MODULES.values():
        importlib.import_module(module)


register_kind_loader(_import_builtin_tools)


def register_tool(
    name: str, factory: type[ToolDefinition[Any, Any]] | ToolDefinition[Any, Any] | ToolFactory
) -> None:
    """Register a tool under `name`.

    `factory` is a ToolDefinition subclass (its `create` is used), a ready ToolDefinition
    instance (shared by every conversation), or a callable `(conv_state, **params)`.
    """
    if not name:
        raise ValueError("a tool needs a non-empty name")
    resolved: ToolFactory
    if inspect.isclass(factory) and issubclass(factory, ToolDefinition):
        resolved = factory.create
    elif isinstance(factory, ToolDefinition):
        instance = factory

        def resolved(conv_state: Any, **params: Any) -> Sequence[ToolDefinition[Any, Any]]:
            return [instance]
    elif callable(factory):
        resolved = cast(ToolFactory, factory)
    else:
        raise TypeError(f"cannot register {factory!r} as tool '{name}'")
    with _lock:
        _registry[name] = resolved


def list_registered_tools() -> list[str]:
    """The names of all tools that can be resolved, built-ins included."""
    with _lock:
        return sorted(set(_registry) | set(_BUILTIN_MODULES))


def resolve_tool(spec: Tool, conv_state: ConversationState) -> Sequence[ToolDefinition[Any, Any]]:
    """Create the ToolDefinitions a spec names, for one conversation."""
    with _lock:
        factory = _registry.get(spec.name)
    if factory is None and spec.name in _BUILTIN_MODULES:
        importlib.import_module(_BUILTIN_MODULES[spec.name])  # registers itself
        with _lock:
            factory = _registry.get(spec.name)
    if factory is None:
        known = ", ".join(list_registered_tools())
        raise ValueError(f"no tool registered as '{spec.name}' (known tools: {known})")
    return factory(conv_state, **spec.params)
