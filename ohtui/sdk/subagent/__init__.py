"""Sub-agents: agent types registered by name (in code, from Markdown files, by plugins),
which the task and delegate tools start as conversations of their own."""

from ohtui.sdk.subagent.load import (
    discover_agents,
    load_agents_from_dir,
    load_project_agents,
    load_user_agents,
)
from ohtui.sdk.subagent.registry import (
    AgentFactory,
    agent_definition_to_factory,
    get_agent_factory,
    get_factory_info,
    get_registered_agent_definitions,
    register_agent,
    register_agent_if_absent,
    register_file_agents,
    register_plugin_agents,
)
from ohtui.sdk.subagent.schema import AgentDefinition, AgentDefinitionError, AgentDefinitionLevel

__all__ = [
    "AgentDefinition",
    "AgentDefinitionError",
    "AgentDefinitionLevel",
    "AgentFactory",
    "agent_definition_to_factory",
    "discover_agents",
    "get_agent_factory",
    "get_factory_info",
    "get_registered_agent_definitions",
    "load_agents_from_dir",
    "load_project_agents",
    "load_user_agents",
    "register_agent",
    "register_agent_if_absent",
    "register_file_agents",
    "register_plugin_agents",
]
