"""The registry of sub-agent types: a name, a factory making the Agent from an LLM, and its
definition. The first registration of a name wins: `register_agent` refuses a name taken,
`register_agent_if_absent` (plugins, files, built-ins) leaves it as it is.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from ohtui.sdk.subagent.load import load_project_agents, load_user_agents
from ohtui.sdk.subagent.schema import AgentDefinition

if TYPE_CHECKING:
    from ohtui.sdk.agent.agent import Agent
    from ohtui.sdk.context.skills.skill import Skill
    from ohtui.sdk.llm.llm import LLM

logger = logging.getLogger(__name__)

DEFAULT_AGENT = "general-purpose"
"""The type a task gets when it names none."""
_RENAMED: dict[str, str] = {
    "default": "general-purpose",
    "default cli mode": "general-purpose",
    "explore": "code-explorer",
    "bash": "bash-runner",
}
"""Older names of the built-in types, still accepted (with a deprecation warning)."""


class AgentFactory(NamedTuple):
    """A registered sub-agent type: what makes its Agent, and its definition."""

    factory_func: Callable[[LLM], Agent]
    definition: AgentDefinition


_agent_factories: dict[str, AgentFactory] = {}
_registry_lock = threading.RLock()


def _definition(name: str, description: str | AgentDefinition) -> AgentDefinition:
    if isinstance(description, AgentDefinition):
        return description
    return AgentDefinition(name=name, description=description)


def register_agent(
    name: str,
    factory_func: Callable[[LLM], Agent],
    description: str | AgentDefinition,
) -> None:
    """Register a sub-agent type under `name` for every conversation in this process.

    `factory_func` gets the parent's LLM (a copy) and returns the sub-agent's Agent;
    `description` is a text, or a whole AgentDefinition (its tools, prompt, limits).
    ValueError when the name is taken.
    """
    if not name or not name.strip():
        raise ValueError("an agent type needs a non-empty name")
    definition = _definition(name, description)
    with _registry_lock:
        if name in _agent_factories:
            raise ValueError(f"Agent '{name}' already registered")
        _agent_factories[name] = AgentFactory(factory_func, definition)


def register_agent_if_absent(
    name: str,
    factory_func: Callable[[LLM], Agent],
    description: str | AgentDefinition,
) -> bool:
    """Register like `register_agent` unless the name is taken; whether it was registered."""
    definition = _definition(name, description)
    with _registry_lock:
        if name in _agent_factories:
            return False
        _agent_factories[name] = AgentFactory(factory_func, definition)
        return True


def _resolve_skills(agent_def: AgentDefinition, work_dir: str | Path | None) -> list[Skill]:
    """The definition's skills by name, the project's winning over the user's."""
    if not agent_def.skills:
        return []
    from ohtui.sdk.context.skills.loader import SkillLoad, load_project_skills, load_user_skills

    available = SkillLoad()
    if work_dir is not None:
        available.add_missing(load_project_skills(work_dir))
    available.add_missing(load_user_skills())
    missing = [name for name in agent_def.skills if name not in available.skills]
    if missing:
        raise ValueError(
            f"Skill '{missing[0]}' not found but was given to agent '{agent_def.name}': add it "
            "to the project's .agents/skills or the user's ~/.agents/skills"
        )
    return [available.skills[name] for name in agent_def.skills]


def agent_definition_to_factory(
    agent_def: AgentDefinition,
    work_dir: str | Path | None = None,
) -> Callable[[LLM], Agent]:
    """A factory making the definition's Agent from the parent's LLM.

    Its prompt is added to the system prompt (`AgentContext.system_message_suffix`), its
    skills are found now (in `work_dir`'s and the user's skills; ValueError for one not
    found), its tools when the factory runs (ValueError for one not registered). `model`
    other than 'inherit' runs the same LLM settings with that model. Without a condenser
    of its own it gets a summarizing one, counted under the usage id "condenser".
    """
    skills = _resolve_skills(agent_def, work_dir)

    def factory(llm: LLM) -> Agent:
        from ohtui.sdk.agent.agent import Agent
        from ohtui.sdk.context.agent_context import AgentContext
        from ohtui.sdk.context.condenser.llm_summarizing_condenser import (
            LLMSummarizingCondenser,
            default_condenser,
        )
        from ohtui.sdk.tool.registry import list_registered_tools
        from ohtui.sdk.tool.spec import Tool

        if agent_def.model and agent_def.model != "inherit":
            llm = llm.model_copy(update={"model": agent_def.model})
        registered = set(list_registered_tools())
        unknown = [name for name in agent_def.tools if name not in registered]
        if unknown:
            raise ValueError(
                f"Tool '{unknown[0]}' not registered but was given to agent "
                f"'{agent_def.name}' (registered tools: {', '.join(sorted(registered))})"
            )
        context = (
            AgentContext(system_message_suffix=agent_def.system_prompt or None, skills=skills)
            if agent_def.system_prompt or skills
            else None
        )
        condenser: Any = agent_def.condenser
        if isinstance(condenser, LLMSummarizingCondenser):
            # Each spawn counts its condenser apart, under an id other than the agent's.
            usage_id = condenser.llm.usage_id if condenser.llm.usage_id != llm.usage_id else None
            condenser = condenser.model_copy(
                update={
                    "llm": condenser.llm.model_copy(update={"usage_id": usage_id or "condenser"})
                }
            )
        elif condenser is None:
            condenser = default_condenser(llm.model_copy(update={"usage_id": "condenser"}))
        return Agent(
            llm=llm,
            tools=[Tool(name=name) for name in agent_def.tools],
            agent_context=context,
            mcp_config=agent_def.mcp_config or {},
            condenser=condenser,
        )

    return factory


def _register_definitions(
    definitions: list[AgentDefinition], work_dir: str | Path | None, what: str
) -> list[str]:
    registered: list[str] = []
    for agent_def in definitions:
        try:
            factory = agent_definition_to_factory(agent_def, work_dir=work_dir)
        except ValueError as exc:
            logger.warning("not registering %s agent '%s': %s", what, agent_def.name, exc)
            continue
        if register_agent_if_absent(agent_def.name, factory, agent_def):
            registered.append(agent_def.name)
            where = f" from {agent_def.source}" if agent_def.source else ""
            logger.info("registered %s agent '%s'%s", what, agent_def.name, where)
    return registered


def register_file_agents(work_dir: str | Path) -> list[str]:
    """Register the project's and the user's agent files (the project's win a name), without
    replacing any type registered already; the names registered."""
    seen: set[str] = set()
    definitions: list[AgentDefinition] = []
    for agent_def in [*load_project_agents(work_dir), *load_user_agents()]:
        if agent_def.name not in seen:
            seen.add(agent_def.name)
            definitions.append(agent_def)
    return _register_definitions(definitions, work_dir, "file-based")


def register_plugin_agents(
    agents: list[AgentDefinition], work_dir: str | Path | None = None
) -> list[str]:
    """Register plugins' agents, without replacing any type registered already; the names
    registered."""
    return _register_definitions(list(agents), work_dir, "plugin")


def get_agent_factory(name: str | None) -> AgentFactory:
    """The registered type `name` (None or empty: the general-purpose one).

    ValueError listing the registered types when there is none of that name.
    """
    if name in _RENAMED:
        import warnings

        new_name = _RENAMED[name]
        warnings.warn(
            f"Agent name '{name}' is deprecated; use '{new_name}' instead.",
            DeprecationWarning,
            stacklevel=2,
        )
        wanted = new_name
    else:
        wanted = name or DEFAULT_AGENT
    with _registry_lock:
        factory = _agent_factories.get(wanted)
        available = sorted(_agent_factories)
    if factory is None:
        listed = ", ".join(available) if available else "none registered"
        raise ValueError(
            f"Unknown agent '{name}'. Available types: {listed}. "
            "Use register_agent() to add custom agent types."
        )
    return factory


def get_factory_info() -> str:
    """The registered types as Markdown bullets, for the task tool's description."""
    with _registry_lock:
        factories = sorted(_agent_factories.items())
    if not factories:
        return "- No user-registered agents yet. Call register_agent(...) to add custom agents."

    def line(name: str, factory: AgentFactory) -> str:
        tools = factory.definition.tools
        listed = f" (tools: {', '.join(tools)})" if tools else ""
        return f"- **{name}**: {factory.definition.description}{listed}"

    return "\n".join(line(name, factory) for name, factory in factories)


def get_registered_agent_definitions() -> list[AgentDefinition]:
    """The definitions of every registered type."""
    with _registry_lock:
        return [factory.definition for factory in _agent_factories.values()]


def _reset_registry_for_tests() -> None:
    """Forget every registered type (tests only)."""
    with _registry_lock:
        _agent_factories.clear()
