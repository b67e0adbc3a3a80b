"""The delegate tool and DelegationVisualizer, run against the scripted LLM server."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from llm_server import Reply, ScriptedLLMServer, ToolCall
from rich.console import Console

from ohtui.sdk import LLM, Agent, LocalConversation, Tool
from ohtui.sdk.event import ObservationEvent
from ohtui.sdk.subagent import register_agent, registry
from ohtui.sdk.tools.delegate import DelegateObservation, DelegateTool, DelegationVisualizer


@pytest.fixture(autouse=True)
def planner_type() -> Iterator[None]:
    saved = dict(registry._agent_factories)
    registry._reset_registry_for_tests()
    register_agent("planner", lambda llm: Agent(llm=llm, tools=[]), "Plans.")
    register_agent("general-purpose", lambda llm: Agent(llm=llm, tools=[]), "Anything.")
    try:
        yield
    finally:
        registry._reset_registry_for_tests()
        registry._agent_factories.update(saved)


def _observations(conversation: LocalConversation) -> list[DelegateObservation]:
    return [
        e.observation
        for e in conversation.state.events
        if isinstance(e, ObservationEvent) and isinstance(e.observation, DelegateObservation)
    ]


def _echo_sub_agents(body: dict[str, Any]) -> Reply:
    offered = {t["function"]["name"] for t in body.get("tools") or []}
    if DelegateTool.name in offered:
        return Reply(tool_calls=(ToolCall("finish", '{"message": "merged"}'),))
    asked = [m for m in body["messages"] if m["role"] == "user"][-1]["content"]
    text = asked if isinstance(asked, str) else asked[0]["text"]
    return Reply(tool_calls=(ToolCall("finish", json.dumps({"message": f"did {text}"})),))


def test_spawned_sub_agents_take_their_tasks_and_answer_by_name(
    llm: LLM, llm_server: ScriptedLLMServer, workspace: Path
) -> None:
    llm_server.reply_tool_call(
        "delegate", {"command": "spawn", "ids": ["lodging", "food"], "agent_types": ["planner"]}
    )
    llm_server.reply_tool_call(
        "delegate", {"command": "delegate", "tasks": {"lodging": "hotels", "food": "cafes"}}
    )
    llm_server.set_default(_echo_sub_agents)
    output = io.StringIO()
    visualizer = DelegationVisualizer(name="MainDelegator", console=Console(file=output, width=120))
    parent = LocalConversation(
        agent=Agent(llm=llm, tools=[Tool(name=DelegateTool.name)]),
        workspace=workspace,
        visualizer=visualizer,
    )
    parent.send_message("plan a trip")

    parent.run()

    spawned, delegated = _observations(parent)
    assert spawned.text == (
        "Successfully spawned 2 sub-agents: lodging (planner), food (general-purpose)"
    )
    assert delegated.text.endswith(
        "Results:\n1. Agent lodging: did hotels\n2. Agent food: did cafes"
    )
    assert set(parent.conversation_stats.usage_to_metrics) >= {"delegate:lodging", "delegate:food"}
    shown = output.getvalue()
    assert "User Message to Main Delegator Agent" in shown
    assert "Main Delegator Agent Message to Lodging Agent" in shown  # the sub-agent's view
    assert "Lodging Agent Action" in shown
    assert "Main Delegator Agent Observation" in shown
    parent.close()


def test_spawn_and_delegate_refuse_what_cannot_be_done(
    llm: LLM, llm_server: ScriptedLLMServer, workspace: Path
) -> None:
    llm_server.reply_tool_call("delegate", {"command": "spawn", "ids": []})
    llm_server.reply_tool_call(
        "delegate", {"command": "spawn", "ids": ["a"], "agent_types": ["planner", "planner"]}
    )
    llm_server.reply_tool_call("delegate", {"command": "delegate", "tasks": {"ghost": "boo"}})
    llm_server.reply_tool_call(
        "delegate", {"command": "spawn", "ids": ["x"], "agent_types": ["nobody"]}
    )
    llm_server.reply_tool_call("finish", {"message": "ok"})
    parent = LocalConversation(
        agent=Agent(llm=llm, tools=[Tool(name=DelegateTool.name)]),
        workspace=workspace,
        visualizer=None,
    )
    parent.send_message("go")

    parent.run()

    texts = [o.text for o in _observations(parent)]
    assert all(o.is_error for o in _observations(parent))
    assert texts[0] == "At least one ID is required for spawn action"
    assert "agent_types length (2) cannot exceed ids length (1)" in texts[1]
    assert "sub-agents not found: ghost" in texts[2]
    assert "Unknown agent 'nobody'" in texts[3]
    parent.close()
