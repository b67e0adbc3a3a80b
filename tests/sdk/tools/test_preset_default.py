"""The default preset (upstream's `openhands.tools.preset.default`): its tools, condenser and
agent, built for real and resolved against a real conversation."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from ohtui.sdk import LLM, Conversation
from ohtui.sdk.agent.prompts import CLI_MODE_LINES
from ohtui.sdk.context.condenser import LLMSummarizingCondenser, default_condenser
from ohtui.sdk.tools.preset import default as preset
from ohtui.sdk.tools.preset import get_default_agent, get_default_tools


def test_default_tools_are_the_three_ohtui_ships() -> None:
    names = [tool.name for tool in get_default_tools(enable_browser=False)]
    assert names == ["terminal", "file_editor", "task_tracker"]


def test_asking_for_the_browser_leaves_it_out_with_one_warning(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(preset, "_browser_warned", False)
    with caplog.at_level(logging.WARNING, logger=preset.__name__):
        first = get_default_tools(enable_browser=True)
        get_default_tools(enable_browser=True)
    assert [tool.name for tool in first] == ["terminal", "file_editor", "task_tracker"]
    warnings = [r.getMessage() for r in caplog.records if r.name == preset.__name__]
    assert len(warnings) == 1 and "no browser tool" in warnings[0]


def test_sub_agents_without_the_task_tool_is_a_clear_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(preset, "SUB_AGENT_TOOL_MODULE", "ohtui.sdk.tools.no_such_task_module")
    with pytest.raises(RuntimeError, match="enable_sub_agents=False"):
        get_default_tools(enable_browser=False, enable_sub_agents=True)


def test_default_condenser_summarizes_with_upstream_sizes() -> None:
    llm = LLM(model="openai/test-model", api_key="sk-test")
    condenser = default_condenser(llm)
    assert isinstance(condenser, LLMSummarizingCondenser)
    assert (condenser.max_size, condenser.keep_first) == (80, 4)
    assert condenser.llm is llm


def test_default_agent_runs_with_its_tools_and_a_separate_condenser_llm(
    llm: LLM, workspace: Path, persistence_dir: Path
) -> None:
    agent = get_default_agent(llm, cli_mode=True)
    assert agent.system_prompt_kwargs == {"cli_mode": True}
    assert isinstance(agent.condenser, LLMSummarizingCondenser)
    assert agent.condenser.llm.usage_id == "condenser" and agent.llm.usage_id == "default"
    conv = Conversation(
        agent=agent, workspace=workspace, persistence_dir=persistence_dir, visualizer=None
    )
    try:
        conv.agent.init_state(conv.state, lambda event: None)
        assert set(conv.agent.tools_map) == {
            "terminal",
            "file_editor",
            "task_tracker",
            "finish",
            "think",
        }
        assert CLI_MODE_LINES[True] in conv.agent.system_message
    finally:
        conv.close()


def test_cli_mode_false_says_hosted_workspace_and_unset_says_nothing(
    llm: LLM, workspace: Path, persistence_dir: Path
) -> None:
    from ohtui.sdk.agent.prompts import render_system_prompt

    hosted = render_system_prompt(str(workspace), [], kwargs={"cli_mode": False})
    plain = render_system_prompt(str(workspace), [])
    assert CLI_MODE_LINES[False] in hosted
    assert not any(line in plain for line in CLI_MODE_LINES.values())
