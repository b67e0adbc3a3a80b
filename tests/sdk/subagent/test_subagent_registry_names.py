"""The sub-agent registry: first registration wins, unknown names are listed, and a
definition becomes the Agent it describes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ohtui.sdk import LLM, Agent
from ohtui.sdk.context.condenser import LLMSummarizingCondenser, NoOpCondenser
from ohtui.sdk.subagent import (
    AgentDefinition,
    agent_definition_to_factory,
    get_agent_factory,
    get_factory_info,
    get_registered_agent_definitions,
    register_agent,
    register_agent_if_absent,
    register_file_agents,
    registry,
)
from ohtui.sdk.tools.preset import discover_builtin_agents, register_builtins_agents


@pytest.fixture(autouse=True)
def clean_registry() -> Iterator[None]:
    saved = dict(registry._agent_factories)
    registry._reset_registry_for_tests()
    try:
        yield
    finally:
        registry._reset_registry_for_tests()
        registry._agent_factories.update(saved)


def _llm() -> LLM:
    return LLM(model="openai/test-model", api_key="sk-test", usage_id="parent")


def _plain(llm: LLM) -> Agent:
    return Agent(llm=llm, tools=[])


def test_a_name_is_registered_once() -> None:
    register_agent("helper", _plain, "Helps.")

    with pytest.raises(ValueError, match="Agent 'helper' already registered"):
        register_agent("helper", _plain, "Again.")
    assert register_agent_if_absent("helper", _plain, "Again.") is False
    assert register_agent_if_absent("other", _plain, "Other.") is True
    assert get_agent_factory("helper").definition.description == "Helps."
    assert {d.name for d in get_registered_agent_definitions()} == {"helper", "other"}


def test_an_unknown_type_lists_the_registered_ones() -> None:
    register_agent("b-agent", _plain, "B")
    register_agent("a-agent", _plain, "A")

    with pytest.raises(
        ValueError, match=r"Unknown agent 'nope'\. Available types: a-agent, b-agent"
    ):
        get_agent_factory("nope")


def test_no_name_is_the_general_purpose_agent_and_old_names_still_work() -> None:
    register_agent("general-purpose", _plain, "All round.")
    register_agent("code-explorer", _plain, "Reads.")

    assert get_agent_factory(None).definition.name == "general-purpose"
    assert get_agent_factory("").definition.name == "general-purpose"
    with pytest.warns(DeprecationWarning, match="'explore' is deprecated"):
        assert get_agent_factory("explore").definition.name == "code-explorer"


def test_the_factory_info_lists_types_with_their_tools() -> None:
    assert "No user-registered agents" in get_factory_info()
    definition = AgentDefinition(name="runner", description="Runs things.", tools=["terminal"])
    register_agent("runner", _plain, definition)

    assert get_factory_info() == "- **runner**: Runs things. (tools: terminal)"


def test_a_definition_becomes_its_agent() -> None:
    definition = AgentDefinition(
        name="editor", tools=["file_editor", "terminal"], system_prompt="Edit carefully."
    )

    agent = agent_definition_to_factory(definition)(_llm())

    assert [t.name for t in agent.tools] == ["file_editor", "terminal"]
    assert agent.agent_context is not None
    assert agent.agent_context.system_message_suffix == "Edit carefully."
    assert isinstance(agent.condenser, LLMSummarizingCondenser)
    assert agent.condenser.llm.usage_id == "condenser"  # counted apart from the agent
    assert agent.llm.model == "openai/test-model"


def test_a_definition_may_name_another_model_or_no_condenser() -> None:
    definition = AgentDefinition(name="x", model="openai/other-model", condenser=NoOpCondenser())

    agent = agent_definition_to_factory(definition)(_llm())

    assert agent.llm.model == "openai/other-model"
    assert isinstance(agent.condenser, NoOpCondenser)
    assert agent.agent_context is None


def test_an_unknown_tool_or_skill_is_refused_by_name(tmp_path: Path) -> None:
    factory = agent_definition_to_factory(AgentDefinition(name="x", tools=["teleporter"]))
    with pytest.raises(
        ValueError, match="Tool 'teleporter' not registered but was given to agent 'x'"
    ):
        factory(_llm())

    with pytest.raises(ValueError, match="Skill 'nowhere' not found but was given to agent 'y'"):
        agent_definition_to_factory(AgentDefinition(name="y", skills=["nowhere"]), tmp_path)


def test_a_definition_finds_its_skills_in_the_project(tmp_path: Path) -> None:
    skills = tmp_path / ".agents" / "skills"
    skills.mkdir(parents=True)
    (skills / "style.md").write_text("---\nname: style\n---\nUse tabs.\n", encoding="utf-8")

    factory = agent_definition_to_factory(AgentDefinition(name="x", skills=["style"]), tmp_path)
    agent = factory(_llm())

    assert agent.agent_context is not None
    assert [s.name for s in agent.agent_context.skills] == ["style"]


def test_file_agents_never_replace_registered_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    folder = tmp_path / ".agents" / "agents"
    folder.mkdir(parents=True)
    (folder / "a.md").write_text("---\nname: mine\n---\nFrom a file.\n", encoding="utf-8")
    (folder / "b.md").write_text("---\nname: taken\n---\nFrom a file.\n", encoding="utf-8")
    (folder / "c.md").write_text("---\nname: tooly\ntools: [nope]\n---\n", encoding="utf-8")
    register_agent("taken", _plain, "In code.")

    assert register_file_agents(tmp_path) == ["mine", "tooly"]  # tools resolve at spawn
    assert get_agent_factory("taken").definition.description == "In code."
    assert get_agent_factory("mine").definition.system_prompt == "From a file."


def test_the_built_in_types_fill_in_behind_registered_ones() -> None:
    names = [d.name for d in discover_builtin_agents()]
    assert names == ["bash-runner", "code-explorer", "general-purpose"]
    assert all(d.level == "builtin" for d in discover_builtin_agents(enable_browser=False))
    register_agent("bash-runner", _plain, "Mine.")

    assert register_builtins_agents() == ["code-explorer", "general-purpose"]
    assert register_builtins_agents() == []
    assert get_agent_factory("bash-runner").definition.description == "Mine."
    general = get_agent_factory("general-purpose").factory_func(_llm())
    assert [t.name for t in general.tools] == ["terminal", "file_editor", "task_tracker"]
