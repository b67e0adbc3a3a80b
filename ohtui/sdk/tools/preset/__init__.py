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
from ohtui.sdk.tools.preset.gemini import get_gemini_agent, get_gemini_tools
from ohtui.sdk.tools.preset.gpt5 import get_gpt5_agent
from ohtui.sdk.tools.preset.planning import get_planning_agent

__all__ = [
    "discover_builtin_agents",
    "get_default_agent",
    "get_default_condenser",
    "get_default_tools",
    "get_gemini_agent",
    "get_gemini_tools",
    "get_gpt5_agent",
    "get_planning_agent",
    "register_builtins_agents",
    "register_default_tools",
]
