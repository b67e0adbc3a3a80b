"""Ready-made agent set-ups (upstream's `openhands.tools.preset`): a starting point, not a
replacement for building your own Agent."""

from ohtui.sdk.tools.preset.default import (
    discover_builtin_agents,
    get_default_agent,
    get_default_condenser,
    get_default_tools,
    register_builtins_agents,
    register_default_tools,
)

__all__ = [
    "discover_builtin_agents",
    "get_default_agent",
    "get_default_condenser",
    "get_default_tools",
    "register_builtins_agents",
    "register_default_tools",
]
