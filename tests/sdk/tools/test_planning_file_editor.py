"""The planning file editor: views anything, changes only the plan file, which it makes with
the plan's headings; and the planning preset that gives it to an agent."""

from __future__ import annotations

import types
from pathlib import Path

import pytest
from llm_server import ScriptedLLMServer

from ohtui.sdk import LLM, Conversation, ObservationEvent
from ohtui.sdk.context.condenser import LLMSummarizingCondenser
from ohtui.sdk.tools.planning_file_editor import (
    PlanningFileEditorAction,
    PlanningFileEditorObservation,
    PlanningFileEditorTool,
)
from ohtui.sdk.tools.planning_file_editor.plan import PLAN_STRUCTURE, get_plan_headers
from ohtui.sdk.tools.preset.planning import get_planning_agent, get_planning_tools
from ohtui.sdk.workspace.local import LocalWorkspace


def make_tool(root: Path, plan_path: str | None = None) -> PlanningFileEditorTool:
    state = types.SimpleNamespace(workspace=LocalWorkspace(working_dir=str(root)))
    [tool] = PlanningFileEditorTool.create(state, plan_path=plan_path)  # type: ignore[arg-type]
    return tool


def run(tool: PlanningFileEditorTool, **fields: object) -> PlanningFileEditorObservation:
    obs = tool(PlanningFileEditorAction(**fields))  # type: ignore[arg-type]
    assert isinstance(obs, PlanningFileEditorObservation)
    return obs


def test_the_plan_is_made_in_agents_tmp_with_its_headings(workspace: Path) -> None:
    tool = make_tool(workspace)
    plan = workspace.resolve() / ".agents_tmp" / "PLAN.md"
    assert plan.read_text() == get_plan_headers()
    assert all(f". {title}" in plan.read_text() for title, _ in PLAN_STRUCTURE)
    assert str(plan) in tool.description


def test_a_legacy_plan_at_the_top_is_used_as_it_is(workspace: Path) -> None:
    legacy = workspace / "PLAN.md"
    legacy.write_text("# Old plan\n")
    tool = make_tool(workspace)
    assert str(legacy.resolve()) in tool.description
    assert legacy.read_text() == "# Old plan\n"
    assert not (workspace / ".agents_tmp").exists()


def test_a_given_plan_path_is_made_with_its_folders(workspace: Path) -> None:
    custom = workspace / "config" / "nested" / "PLAN.md"
    tool = make_tool(workspace, str(custom))
    assert custom.read_text() == get_plan_headers()
    assert str(custom) in tool.description


def test_a_relative_plan_path_is_refused(workspace: Path) -> None:
    with pytest.raises(ValueError, match="plan_path must be an absolute path, got: rel"):
        make_tool(workspace, "rel/PLAN.md")


def test_it_edits_the_plan_and_views_any_file(workspace: Path) -> None:
    (workspace / "app.py").write_text("print('x')\n")
    tool = make_tool(workspace)
    plan = workspace.resolve() / ".agents_tmp" / "PLAN.md"
    viewed = run(tool, command="view", path="app.py")
    assert not viewed.is_error and "print('x')" in viewed.text
    edited = run(
        tool,
        command="str_replace",
        path=str(plan),
        old_str="# 1. OBJECTIVE\n",
        new_str="# 1. OBJECTIVE\nShip the scraper.\n",
    )
    assert not edited.is_error, edited.text
    assert edited.diff and "+Ship the scraper." in edited.diff
    assert "Ship the scraper." in plan.read_text()
    undone = run(tool, command="undo_edit", path=str(plan))
    assert not undone.is_error and plan.read_text() == get_plan_headers()


@pytest.mark.parametrize(
    "fields",
    [
        {"command": "create", "path": "new.py", "file_text": "x = 1\n"},
        {"command": "str_replace", "path": "app.py", "old_str": "x", "new_str": "y"},
        {"command": "insert", "path": "app.py", "insert_line": 0, "new_str": "# hi"},
        {"command": "undo_edit", "path": "app.py"},
    ],
)
def test_every_other_change_is_refused_and_changes_nothing(
    workspace: Path, fields: dict[str, object]
) -> None:
    (workspace / "app.py").write_text("x\n")
    tool = make_tool(workspace)
    obs = run(tool, **fields)
    assert obs.is_error
    assert "may only change" in obs.text and "PLAN.md" in obs.text
    assert (workspace / "app.py").read_text() == "x\n"
    assert not (workspace / "new.py").exists()


def test_a_link_to_another_file_does_not_open_a_way_out(workspace: Path) -> None:
    """The plan check is made where the file really is: a plan swapped for a link to
    another file is not written through."""
    tool = make_tool(workspace)
    plan = workspace / ".agents_tmp" / "PLAN.md"
    target = workspace / "victim.txt"
    target.write_text("keep me\n")
    plan.unlink()
    plan.symlink_to(target)
    obs = run(tool, command="str_replace", path=str(plan), old_str="keep me", new_str="overwritten")
    assert obs.is_error
    assert target.read_text() == "keep me\n"


def test_planning_tools_pass_the_plan_path_only_when_given() -> None:
    tools = get_planning_tools()
    assert [t.name for t in tools] == ["glob", "grep", "planning_file_editor"]
    assert tools[2].params == {}
    assert get_planning_tools(plan_path="/w/PLAN.md")[2].params == {"plan_path": "/w/PLAN.md"}


def test_the_planning_agent_explores_and_writes_only_the_plan(
    llm: LLM, llm_server: ScriptedLLMServer, workspace: Path, persistence_dir: Path
) -> None:
    (workspace / "scraper.py").write_text("import requests\n")
    agent = get_planning_agent(llm)
    assert isinstance(agent.condenser, LLMSummarizingCondenser)
    assert (agent.condenser.max_size, agent.condenser.keep_first) == (100, 6)
    assert agent.condenser.llm.usage_id == "planning_condenser"
    plan = workspace.resolve() / ".agents_tmp" / "PLAN.md"
    llm_server.reply_tool_call("grep", {"pattern": "requests"})
    llm_server.reply_tool_call(
        "planning_file_editor",
        {"command": "create", "path": "scraper.py", "file_text": "oops", "security_risk": "LOW"},
    )
    llm_server.reply_tool_call(
        "planning_file_editor",
        {
            "command": "insert",
            "path": str(plan),
            "insert_line": 1,
            "new_str": "Scrape titles.",
            "security_risk": "LOW",
        },
    )
    llm_server.reply_text("The plan is in .agents_tmp/PLAN.md")
    conv = Conversation(
        agent=agent, workspace=workspace, persistence_dir=persistence_dir, visualizer=None
    )
    try:
        conv.send_message("Plan a scraper.")
        conv.run()
        assert "<PLANNING>" in conv.agent.system_message
        assert "The plan must follow this structure exactly" in conv.agent.system_message
        results = [e.observation for e in conv.state.events if isinstance(e, ObservationEvent)]
        assert "scraper.py" in results[0].text and not results[0].is_error
        assert results[1].is_error
        assert not results[2].is_error
        assert (workspace / "scraper.py").read_text() == "import requests\n"
        assert plan.read_text().startswith("# 1. OBJECTIVE\nScrape titles.\n")
    finally:
        conv.close()


def test_an_unknown_prompt_file_is_a_clear_error(llm: LLM) -> None:
    from ohtui.sdk import Agent

    with pytest.raises(ValueError, match="renders no Jinja2 template"):
        Agent(llm=llm, system_prompt_filename="/tmp/custom.j2")


def test_the_planning_agent_crosses_the_wire_with_its_prompt(llm: LLM) -> None:
    from ohtui.sdk.wire.agent_in import agent_from_wire
    from ohtui.sdk.wire.agent_out import agent_to_wire

    agent = get_planning_agent(llm)
    payload = agent_to_wire(agent)
    assert payload["system_prompt_filename"] == "system_prompt_planning.j2"
    back = agent_from_wire(payload)
    assert back.system_prompt_filename == agent.system_prompt_filename
    assert back.system_prompt_kwargs == agent.system_prompt_kwargs
    assert [t.name for t in back.tools] == ["glob", "grep", "planning_file_editor"]
