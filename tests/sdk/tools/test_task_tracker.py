"""Tests for the task_tracker tool: plan, view, persistence in agent_state and rendering."""

from __future__ import annotations

import types
from pathlib import Path
from typing import Any

import pytest

from ohtui.sdk.tool import Observation, Tool, resolve_tool
from ohtui.sdk.tools.task_tracker import (
    TaskItem,
    TaskTrackerAction,
    TaskTrackerObservation,
    TaskTrackerTool,
)
from ohtui.sdk.workspace.local import LocalWorkspace

PLAN = [
    TaskItem(title="Read the code", status="done"),
    TaskItem(title="Fix the bug", notes="in parser.py", status="in_progress"),
    TaskItem(title="Add a test"),
]


def make_state(root: Path, agent_state: dict[str, Any] | None = None) -> types.SimpleNamespace:
    return types.SimpleNamespace(
        workspace=LocalWorkspace(working_dir=str(root)), agent_state=agent_state or {}
    )


def make_tool(state: types.SimpleNamespace) -> TaskTrackerTool:
    [tool] = TaskTrackerTool.create(state)  # type: ignore[arg-type]
    return tool


def run(tool: TaskTrackerTool, **fields: Any) -> TaskTrackerObservation:
    obs = tool(TaskTrackerAction(**fields))
    assert isinstance(obs, TaskTrackerObservation)
    return obs


def test_resolve_tool_registers_task_tracker(tmp_path: Path) -> None:
    [tool] = resolve_tool(Tool(name="task_tracker"), make_state(tmp_path))  # type: ignore[arg-type]
    assert isinstance(tool, TaskTrackerTool)
    assert tool.name == "task_tracker"
    assert tool.annotations is not None
    assert tool.annotations.destructiveHint is False
    schema = tool.to_openai_tool()["function"]["parameters"]
    assert schema["properties"]["command"]["enum"] == ["view", "plan"]
    assert "title" in schema["properties"]["task_list"]["items"]["properties"]


def test_create_rejects_unknown_params(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no parameters"):
        TaskTrackerTool.create(make_state(tmp_path), limit=3)  # type: ignore[arg-type]


def test_view_without_plan_explains_how_to_make_one(tmp_path: Path) -> None:
    obs = run(make_tool(make_state(tmp_path)), command="view")
    assert not obs.is_error
    assert "no plan yet" in obs.text
    assert "plan command" in obs.text
    assert obs.task_list == []


def test_plan_lists_tasks_with_status_and_counts(tmp_path: Path) -> None:
    obs = run(make_tool(make_state(tmp_path)), command="plan", task_list=PLAN)
    assert not obs.is_error
    assert "3 tasks: 1 done, 1 in progress, 1 to do" in obs.text
    assert "1. [done] Read the code" in obs.text
    assert "2. [in_progress] Fix the bug\n   in parser.py" in obs.text
    assert "3. [todo] Add a test" in obs.text
    assert obs.task_list == PLAN


def test_plan_is_saved_as_plain_dicts_by_assignment(tmp_path: Path) -> None:
    original: dict[str, Any] = {"other": 1}
    state = make_state(tmp_path, original)
    run(make_tool(state), command="plan", task_list=PLAN[:1])
    assert state.agent_state is not original  # a new dict, so the state notices the change
    assert original == {"other": 1}
    assert state.agent_state == {
        "other": 1,
        "task_list": [{"title": "Read the code", "notes": "", "status": "done"}],
    }


def test_plan_survives_a_new_tool_on_the_same_state(tmp_path: Path) -> None:
    state = make_state(tmp_path)
    run(make_tool(state), command="plan", task_list=PLAN)
    obs = run(make_tool(state), command="view")
    assert obs.task_list == PLAN
    assert "3 tasks" in obs.text


def test_reads_stored_tasks_and_skips_invalid_ones(tmp_path: Path) -> None:
    stored = {"task_list": [{"title": "Stored", "status": "in_progress"}, {"status": "bogus"}]}
    obs = run(make_tool(make_state(tmp_path, stored)), command="view")
    assert obs.task_list == [TaskItem(title="Stored", status="in_progress")]
    assert "1 task: 0 done, 1 in progress, 0 to do" in obs.text


def test_plan_replaces_the_whole_list(tmp_path: Path) -> None:
    tool = make_tool(make_state(tmp_path))
    run(tool, command="plan", task_list=PLAN)
    run(tool, command="plan", task_list=[TaskItem(title="Only this")])
    obs = run(tool, command="view")
    assert [t.title for t in obs.task_list] == ["Only this"]


def test_empty_plan_clears_the_list(tmp_path: Path) -> None:
    state = make_state(tmp_path)
    tool = make_tool(state)
    run(tool, command="plan", task_list=PLAN)
    obs = run(tool, command="plan", task_list=[])
    assert "now empty" in obs.text
    assert state.agent_state["task_list"] == []
    assert "no plan yet" in run(tool, command="view").text


def test_empty_title_is_rejected_and_nothing_changes(tmp_path: Path) -> None:
    state = make_state(tmp_path)
    tool = make_tool(state)
    run(tool, command="plan", task_list=PLAN)
    before = state.agent_state
    obs = run(tool, command="plan", task_list=[TaskItem(title="ok"), TaskItem(title="  ")])
    assert obs.is_error
    assert "Task 2 has an empty title" in obs.text
    assert state.agent_state is before
    assert obs.task_list == PLAN


def test_visualize_renders_a_checklist(tmp_path: Path) -> None:
    obs = run(make_tool(make_state(tmp_path)), command="plan", task_list=PLAN)
    text = obs.visualize
    assert text.plain.splitlines() == [
        "☑ Read the code",
        "◐ Fix the bug",
        "  in parser.py",
        "☐ Add a test",
    ]
    styles = {text.plain[s.start : s.end].rstrip("\n"): str(s.style) for s in text.spans}
    assert styles["☑ Read the code"] == "green dim"
    assert styles["◐ Fix the bug"] == "yellow"
    assert styles["  in parser.py"] == "dim"


def test_observation_json_round_trip(tmp_path: Path) -> None:
    obs = run(make_tool(make_state(tmp_path)), command="plan", task_list=PLAN)
    back = Observation.model_validate_json(obs.model_dump_json())
    assert type(back) is TaskTrackerObservation
    assert back == obs
    assert back.task_list[1].status == "in_progress"


def test_action_rejects_unknown_status() -> None:
    with pytest.raises(ValueError, match="status"):
        TaskTrackerAction.model_validate(
            {"command": "plan", "task_list": [{"title": "x", "status": "blocked"}]}
        )
