"""The engine's kinds, found by name however little of it was imported.

`import ohtui.sdk` imports nothing (its names load on first use), so a process may read a
saved conversation or a remote event before the module defining a kind it names (an event,
action, observation, tool, condenser, policy, workspace...) was imported. The first unknown
kind imports these packages, which define every kind the engine itself has.
"""

from __future__ import annotations

import importlib

KIND_PACKAGES = (
    "ohtui.sdk.agent",
    "ohtui.sdk.context",
    "ohtui.sdk.context.conversation_manager",
    "ohtui.sdk.conversation",
    "ohtui.sdk.event",
    "ohtui.sdk.llm",
    "ohtui.sdk.mcp.config",
    "ohtui.sdk.mcp.definition",
    "ohtui.sdk.mcp.server_config",
    "ohtui.sdk.plugins.types",
    "ohtui.sdk.security",
    "ohtui.sdk.security.approval_rules",
    "ohtui.sdk.tool",
    "ohtui.sdk.workspace",
)
"""What `import ohtui.sdk` loaded when its names were imported eagerly: every kind then
defined is defined once these are imported."""


def import_kind_modules() -> None:
    """Import the packages defining the engine's kinds."""
    for name in KIND_PACKAGES:
        importlib.import_module(name)
