"""The built-in sub-agent types (`subagents/*.md`): general-purpose, code-explorer and
bash-runner, registered as fallbacks behind any type of the same name registered before."""

from __future__ import annotations

import logging
from pathlib import Path

from ohtui.sdk.subagent.load import load_agents_from_dir
from ohtui.sdk.subagent.registry import agent_definition_to_factory, register_agent_if_absent
from ohtui.sdk.subagent.schema import AgentDefinition

logger = logging.getLogger(__name__)

BUILTIN_AGENTS_DIR = Path(__file__).parent / "subagents"
BROWSER_ONLY_AGENTS = frozenset({"web-researcher"})
"""Built-in types that need browser tools (ohtui ships none of them yet)."""


def discover_builtin_agents(enable_browser: bool = True) -> list[AgentDefinition]:
    """The built-in agent definitions (`level` "builtin"), without registering them; those
    needing a browser are left out when `enable_browser` is False."""
    found = load_agents_from_dir(BUILTIN_AGENTS_DIR)
    if not enable_browser:
        found = [d for d in found if d.name not in BROWSER_ONLY_AGENTS]
    return [d.model_copy(update={"level": "builtin"}) for d in found]


def register_builtins_agents(enable_browser: bool = True) -> list[str]:
    """Register the built-in agent types not registered yet (in code, by plugins or from
    files); the names registered."""
    registered: list[str] = []
    for agent_def in discover_builtin_agents(enable_browser=enable_browser):
        factory = agent_definition_to_factory(agent_def)
        if register_agent_if_absent(agent_def.name, factory, agent_def):
            registered.append(agent_def.name)
            logger.info("registered built-in agent '%s'", agent_def.name)
    return registered
