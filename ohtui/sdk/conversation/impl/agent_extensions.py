"""What a conversation adds to its agent when it opens: plugins, and the skills on disk.

Skills of the same name replace each other in this order (later wins): the user's skills,
the agent context's own, each plugin's in the order given, the project's (AGENTS.md,
.agents/skills...). MCP server settings: the agent's, then each plugin's (later wins).
Hooks: the conversation's, then each plugin's, all of them run. Persistent memory (the
MEMORY.md indexes) is read here too, when the agent context asks for it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ohtui.sdk.agent.base import AgentBase
from ohtui.sdk.context.agent_context import AgentContext
from ohtui.sdk.context.skills.skill import Skill
from ohtui.sdk.plugins.types import PluginSource, ResolvedPluginSource

if TYPE_CHECKING:
    from ohtui.sdk.hooks.config import HookConfig
    from ohtui.sdk.plugins.loader import PluginCheck


@dataclass
class AgentExtension:
    """The agent as extended, the hooks to run, the plugins' versions, and what was skipped."""

    agent: AgentBase
    hook_config: HookConfig | None
    resolved_plugins: list[ResolvedPluginSource] | None = None
    warnings: list[str] = field(default_factory=list)


def extend_agent(
    agent: AgentBase,
    working_dir: str,
    hook_config: HookConfig | None,
    plugins: Sequence[PluginSource] | None,
    saved_plugins: Sequence[ResolvedPluginSource] | None,
    plugin_cache_dir: Path | None = None,
    plugin_check: PluginCheck | None = None,
) -> AgentExtension:
    """Load the plugins (pinned to `saved_plugins`' commits; those `plugin_check` keeps)
    and the skills the agent's context asks for, and merge them into a copy of the agent.

    Raises PluginFetchError or PluginLoadError when a plugin cannot be used, and what
    `plugin_check` raises; skill files that cannot be read are skipped with a warning each.
    """
    context = agent.agent_context
    wants_disk = context is not None and (
        context.load_project_skills or context.load_user_skills or context.load_memory
    )
    if not plugins and not saved_plugins and not wants_disk:
        return AgentExtension(agent, hook_config)
    from ohtui.sdk.context.skills.loader import load_project_skills, load_user_skills
    from ohtui.sdk.hooks.config import HookConfig
    from ohtui.sdk.plugins.loader import LoadedPlugins, load_plugins

    loaded = (
        load_plugins(plugins, saved_plugins, cache_dir=plugin_cache_dir, check=plugin_check)
        if plugins or saved_plugins
        else LoadedPlugins()
    )
    context = context or AgentContext()
    warnings = list(loaded.warnings)
    layers: list[Iterable[Skill]] = []
    if context.load_user_skills:
        user = load_user_skills(context.user_skills_dirs)
        layers.append(user.skills.values())
        warnings.extend(user.warnings)
    layers += [context.skills, loaded.skills.values()]
    if context.load_project_skills:
        project = load_project_skills(working_dir)
        layers.append(project.skills.values())
        warnings.extend(project.warnings)
    update: dict[str, object] = {"skills": _by_name(layers)}
    if context.load_memory:
        update["memory_context"] = _memory(working_dir, warnings)
    # A new instance, not model_copy: that would share the agent's private per-conversation
    # parts (history, tools) with the caller's object.
    fields = {name: getattr(agent, name) for name in type(agent).model_fields}
    extended = type(agent)(
        **{
            **fields,
            "agent_context": context.model_copy(update=update),
            "mcp_config": {**agent.mcp_config, **loaded.mcp_config},
        }
    )
    return AgentExtension(
        agent=extended,
        hook_config=HookConfig.merge([hook_config, loaded.hooks]),
        resolved_plugins=loaded.resolved or None,
        warnings=warnings,
    )


def _memory(working_dir: str, warnings: list[str]) -> str | None:
    """The memory indexes' text; None (with a warning) when they cannot be read."""
    from ohtui.sdk.context.memory import load_memory

    try:
        return load_memory(working_dir)
    except (OSError, ValueError) as exc:  # a bad home or workspace path: start without memory
        warnings.append(f"persistent memory left out: {exc}")
        return None


def _by_name(layers: Iterable[Iterable[Skill]]) -> list[Skill]:
    """The skills of all layers, a later one replacing an earlier one of the same name."""
    merged: dict[str, Skill] = {}
    for layer in layers:
        for skill in layer:
            merged.pop(skill.name, None)
            merged[skill.name] = skill
    return list(merged.values())
