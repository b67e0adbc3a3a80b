"""The workflow tool: what a script may say, and a real workflow fanning out sub-agents."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from llm_server import Reply, ScriptedLLMServer, ToolCall

from ohtui.sdk import LLM, Agent, LocalConversation, Tool
from ohtui.sdk.event import ObservationEvent
from ohtui.sdk.subagent import register_agent, registry
from ohtui.sdk.tools.workflow import WorkflowObservation, WorkflowScriptError, WorkflowToolSet
from ohtui.sdk.tools.workflow.script import validate_workflow_script


@pytest.fixture(autouse=True)
def echo_type() -> Iterator[None]:
    saved = dict(registry._agent_factories)
    registry._reset_registry_for_tests()
    register_agent("echo", lambda llm: Agent(llm=llm, tools=[]), "Echoes.")
    try:
        yield
    finally:
        registry._reset_registry_for_tests()
        registry._agent_factories.update(saved)


@pytest.mark.parametrize(
    ("script", "says"),
    [
        ("import os\nasync def main(wf): pass", "may not import"),
        ("def main(wf): pass", "exactly one `async def main(wf):`"),
        ("async def main(wf, extra): pass", "must be `async def main(wf):`"),
        ("async def main(wf):\n    return wf._manager", "attribute '_manager'"),
        ("async def main(wf):\n    return (x for x in ()).gi_frame", "attribute 'gi_frame'"),
        ("async def main(wf):\n    return '{0.__class__}'.format(wf)", "attribute 'format'"),
        ("async def main(wf):\n    return __builtins__", "names starting with '_'"),
        ("async def main(wf):\n    return wf.close()", "attribute 'close'"),
        ("async def main(wf) pass", "invalid syntax"),
    ],
)
def test_a_script_outside_the_allowlist_is_refused(script: str, says: str) -> None:
    with pytest.raises(WorkflowScriptError, match=re.escape(says)):
        validate_workflow_script(script)


SCRIPT = """
async def main(wf):
    found = await wf.map_agents(
        ["alpha", "beta", "gamma"], prompt="look at {item}", subagent_type="echo",
        max_concurrency=2,
    )
    return await wf.reduce_agent(found, "combine", subagent_type="echo")
"""


def _answers(body: dict[str, Any]) -> Reply:
    offered = {t["function"]["name"] for t in body.get("tools") or []}
    if "workflow" in offered:
        return Reply(tool_calls=(ToolCall("finish", '{"message": "reported"}'),))
    asked = [m for m in body["messages"] if m["role"] == "user"][-1]["content"]
    text = asked if isinstance(asked, str) else asked[0]["text"]
    said = "combined" if text.startswith("combine") else f"saw {text.split()[-1]}"
    return Reply(tool_calls=(ToolCall("finish", json.dumps({"message": said})),))


def _run(
    llm: LLM, server: ScriptedLLMServer, workspace: Path, script: str
) -> tuple[WorkflowObservation, set[str]]:
    """Run one workflow; its observation, and the parent's stats keys of its tasks."""
    server.reply_tool_call("workflow", {"name": "audit", "script": script})
    server.set_default(_answers)
    parent = LocalConversation(
        agent=Agent(llm=llm, tools=[Tool(name=WorkflowToolSet.name)]),
        workspace=workspace,
        visualizer=None,
    )
    parent.send_message("audit everything")
    parent.run()
    (observation,) = [
        e.observation
        for e in parent.state.events
        if isinstance(e, ObservationEvent) and isinstance(e.observation, WorkflowObservation)
    ]
    tasks = {k for k in parent.conversation_stats.usage_to_metrics if k.startswith("task:")}
    parent.close()
    return observation, tasks


def test_a_workflow_fans_out_sub_agents_and_returns_the_reducers_answer(
    llm: LLM, llm_server: ScriptedLLMServer, workspace: Path
) -> None:
    observation, tasks = _run(llm, llm_server, workspace, SCRIPT)

    assert (observation.status, observation.text) == ("completed", "combined")
    assert len(tasks) == 4  # three mapped and the reducer, each counted in the parent's cost
    last_asked = [r["messages"][-1].get("content") for r in llm_server.requests]
    (asked,) = [a for a in last_asked if isinstance(a, str) and a.startswith("combine\n")]
    assert asked == 'combine\n\nInput:\n[\n  "saw alpha",\n  "saw beta",\n  "saw gamma"\n]'


def test_a_failing_sub_agent_fails_the_workflow_for_the_model(
    llm: LLM, llm_server: ScriptedLLMServer, workspace: Path
) -> None:
    script = "async def main(wf):\n    return await wf.run_agent('x', subagent_type='ghost')"

    observation, _ = _run(llm, llm_server, workspace, script)

    assert observation.status == "error" and observation.is_error
    assert "Unknown agent 'ghost'" in observation.text
