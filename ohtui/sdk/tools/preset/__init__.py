"""Ready-made agent set-ups (upstream's `openhands.tools.preset`): a starting point, not a
replacement for building your own Agent."""

from ohtui.sdk.tools.preset.default import (
    get_default_agent,
    get_default_condenser,
    get_default_tools,
    register_default_tools,
)

__all__ = [
    "get_default_agent",
    "get_default_condenser",
    "get_default_tools",
    "register_default_tools",
]
