"""Plugins: skills, MCP server settings and hooks from a folder or a git repository.

Names are imported on first use: the conversation state needs only the source types, and
`import ohtui.sdk` should not pay for git, tar and the loaders.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ohtui.sdk.plugins.fetch import PluginFetchError, fetch_plugin
    from ohtui.sdk.plugins.loader import LoadedPlugins, PluginCheck, load_plugins
    from ohtui.sdk.plugins.plugin import Plugin, PluginLoadError
    from ohtui.sdk.plugins.types import PluginSource, ResolvedPluginSource

_HOMES = {
    "PluginFetchError": "fetch",
    "fetch_plugin": "fetch",
    "LoadedPlugins": "loader",
    "PluginCheck": "loader",
    "load_plugins": "loader",
    "Plugin": "plugin",
    "PluginLoadError": "plugin",
    "PluginSource": "types",
    "ResolvedPluginSource": "types",
}

__all__ = [
    "LoadedPlugins",
    "Plugin",
    "PluginCheck",
    "PluginFetchError",
    "PluginLoadError",
    "PluginSource",
    "ResolvedPluginSource",
    "fetch_plugin",
    "load_plugins",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)
