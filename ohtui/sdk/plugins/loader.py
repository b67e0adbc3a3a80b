"""Loading several plugins and merging them, as the reference says: skills by name (last
wins), MCP server settings by key (last wins), hooks concatenated (all run). A `check`
(the front end's trust in each plugin) sees them all before any is used, and says which."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ohtui.sdk.context.skills.skill import Skill
from ohtui.sdk.hooks.config import HookConfig
from ohtui.sdk.plugins.fetch import GIT_TIMEOUT_SECONDS, fetch_plugin
from ohtui.sdk.plugins.plugin import Plugin
from ohtui.sdk.plugins.types import PluginSource, ResolvedPluginSource, redact_url_credentials

logger = logging.getLogger(__name__)

PluginCheck = Callable[[list[Plugin]], list[Plugin]]
"""Given the plugins as loaded (nothing of them used yet), the ones to use; may raise to
refuse them all."""


@dataclass
class LoadedPlugins:
    """The merged contents of a list of plugins and the versions they were loaded at."""

    plugins: list[Plugin] = field(default_factory=list)
    skills: dict[str, Skill] = field(default_factory=dict)
    mcp_config: dict[str, Any] = field(default_factory=dict)
    hooks: HookConfig | None = None
    resolved: list[ResolvedPluginSource] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def load_plugins(
    specs: Sequence[PluginSource] | None,
    saved: Sequence[ResolvedPluginSource] | None = None,
    cache_dir: Path | None = None,
    timeout: float = GIT_TIMEOUT_SECONDS,
    check: PluginCheck | None = None,
) -> LoadedPlugins:
    """Fetch and read every plugin in order, then merge those `check` keeps (all without).

    A plugin recorded in `saved` (a resumed conversation's `resolved_plugins`) loads at the
    commit recorded; `specs` None loads the saved plugins as they were. Raises
    PluginFetchError or PluginLoadError (naming the plugin and the fault) if any plugin
    cannot be used: a conversation runs with all the plugins it was given, or none; and
    whatever `check` raises.
    """
    result = LoadedPlugins()
    loaded: list[tuple[PluginSource, Plugin]] = []
    for spec, pinned in _pinned(specs, saved):
        fetched = fetch_plugin(pinned, cache_dir=cache_dir, timeout=timeout)
        plugin = Plugin.load(fetched.path)
        if fetched.resolved_ref is None:  # a folder: where it really is
            plugin.source = str(fetched.path)
        else:
            where = f"#{spec.repo_path}" if spec.repo_path else ""
            plugin.source = redact_url_credentials(spec.source) + where
        plugin.commit = fetched.resolved_ref
        logger.info(
            "plugin %s at %s: %d skills, %d MCP servers, hooks: %s",
            plugin.name,
            fetched.resolved_ref or fetched.path,
            len(plugin.skills),
            len(plugin.mcp_config),
            "yes" if plugin.hooks else "no",
        )
        loaded.append((spec, plugin))
    kept = check([plugin for _, plugin in loaded]) if check is not None else None
    hook_configs: list[HookConfig | None] = []
    for spec, plugin in loaded:
        if kept is not None and not any(plugin is k for k in kept):
            continue
        result.plugins.append(plugin)
        for skill in plugin.skills:
            result.skills.pop(skill.name, None)  # the later one also takes the later place
            result.skills[skill.name] = skill
        result.mcp_config.update(plugin.mcp_config)
        hook_configs.append(plugin.hooks)
        result.resolved.append(ResolvedPluginSource.from_plugin_source(spec, plugin.commit))
        result.warnings.extend(f"plugin {plugin.name}: {w}" for w in plugin.warnings)
    result.hooks = HookConfig.merge(hook_configs)
    return result


def _pinned(
    specs: Sequence[PluginSource] | None, saved: Sequence[ResolvedPluginSource] | None
) -> list[tuple[PluginSource, PluginSource]]:
    """Each plugin as given, and as to fetch: at its saved commit if it was saved."""
    if specs is None:
        return [
            (
                PluginSource(source=r.source, ref=r.original_ref, repo_path=r.repo_path),
                r.to_plugin_source(),
            )
            for r in saved or []
        ]
    pairs: list[tuple[PluginSource, PluginSource]] = []
    for spec in specs:
        match = next((r for r in saved or [] if r.matches(spec) and r.resolved_ref), None)
        pairs.append((spec, spec.model_copy(update={"ref": match.resolved_ref}) if match else spec))
    return pairs
