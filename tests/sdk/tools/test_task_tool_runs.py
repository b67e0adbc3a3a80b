"""The task tool, run for real against the scripted LLM server: a sub-agent works in a
conversation of its own within the parent's limits (policy, secrets, budget, pause), its
cost counts in the parent's, and a task can be resumed with its memory."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from llm_server import Reply, ScriptedLLMServer, ToolCall

from ohtui.sdk import LLM, Agent, LocalConversation, Tool
from ohtui.sdk.conversation.state import ConversationExecutionStatus
from ohtui.sdk.event import ActionEvent, ObservationEvent
from ohtui.sdk.hooks import HookConfig
from ohtui.sdk.security.confirmation_policy import AlwaysConfirm
from ohtui.sdk.subagent import AgentDefinition, register_agent, registry
from ohtui.sdk.tools.task import TaskObservation, TaskToolSet

SECRET = "s3cr3t-value-8472"


@pytest.fixture(autouse=True)
def worker_types() -> Iterator[None]:
    """Two agent types for this file's tests: one without tools, one with the terminal."""
    saved = dict(registry._agent_factories)
    registry._reset_registry_for_tests()
    register_agent("worker", lambda llm: Agent(llm=llm, tools=[]), "Answers.")
    register_agent(
        "runner",
        lambda llm: Agent(llm=llm, tools=[Tool(name="terminal")]),
        AgentDefinition(name="runner", description="Runs commands.", tools=["terminal"]),
    )
    try:
        yield
    finally:
        registry._reset_registry_for_tests()
        registry._agent_factories.update(saved)


def _priced(llm: LLM) -> LLM:
    return llm.model_copy(update={"input_cost_per_token": 1e-3, "output_cost_per_token": 1e-3})


def _parent(
    llm: LLM, workspace: Path, persistence_dir: Path | None = None, **tool_params: Any
) -> LocalConversation:
    agent = Agent(llm=_priced(llm), tools=[Tool(name=TaskToolSet.name, params=tool_params)])
    return LocalConversation(
        agent=agent, workspace=workspace, persistence_dir=persistence_dir, visualizer=None
    )


def _script_task(server: ScriptedLLMServer, **arguments: Any) -> None:
    server.reply_tool_call("task", arguments)


def _observations(conversation: LocalConversation) -> list[TaskObservation]:
    return [
        e.observation
        for e in conversation.state.events
        if isinstance(e, ObservationEvent) and isinstance(e.observation, TaskObservation)
    ]


def _user_texts(body: dict[str, Any]) -> list[str]:
    return [str(m.get("content")) for m in body["messages"] if m["role"] == "user"]


def test_a_task_runs_apart_and_its_cost_counts_in_the_parents(
    llm: LLM, llm_server: ScriptedLLMServer, workspace: Path, persistence_dir: Path
) -> None:
    _script_task(llm_server, prompt="What is six times seven?", subagent_type="worker")
    llm_server.reply_tool_call("finish", {"message": "42"})  # the sub-agent
    llm_server.reply_tool_call("finish", {"message": "It is 42."})  # the parent
    parent = _parent(llm, workspace, persistence_dir)
    parent.send_message("Ask the worker. PARENT-ONLY-CONTEXT")

    parent.run()

    (observation,) = _observations(parent)
    assert (observation.task_id, observation.status, observation.subagent) == (
        "task_00000001",
        "completed",
        "worker",
    )
    assert observation.text == "42" and not observation.is_error
    sub_request = llm_server.requests[1]
    assert "PARENT-ONLY-CONTEXT" not in json.dumps(sub_request["messages"])  # its own context
    assert _user_texts(sub_request)[-1].count("What is six times seven?") == 1
    stats = parent.conversation_stats
    sub_cost = stats.usage_to_metrics["task:task_00000001"].accumulated_cost
    assert sub_cost > 0
    own_cost = sum(
        m.accumulated_cost for k, m in stats.usage_to_metrics.items() if k != "task:task_00000001"
    )
    assert stats.get_combined_metrics().accumulated_cost == pytest.approx(own_cost + sub_cost)
    saved_under = Path(parent.state.persistence_dir or "") / "subagents"
    assert any(saved_under.iterdir())  # the sub-conversation is saved beside its parent
    parent.close()


def test_a_task_resumes_with_its_memory(
    llm: LLM, llm_server: ScriptedLLMServer, workspace: Path, persistence_dir: Path
) -> None:
    _script_task(llm_server, prompt="Remember the word OCELOT.", subagent_type="worker")
    llm_server.reply_tool_call("finish", {"message": "Remembered."})
    llm_server.reply_tool_call("finish", {"message": "ok"})
    _script_task(llm_server, prompt="Which word?", subagent_type="worker", resume="task_00000001")
    llm_server.reply_tool_call("finish", {"message": "OCELOT"})
    llm_server.reply_tool_call("finish", {"message": "ok"})
    parent = _parent(llm, workspace, persistence_dir)
    parent.send_message("first")
    parent.run()
    parent.send_message("second")

    parent.run()

    first, second = _observations(parent)
    assert second.task_id == first.task_id == "task_00000001"
    assert second.text == "OCELOT"
    resumed_request = llm_server.requests[4]
    assert any("Remember the word OCELOT." in t for t in _user_texts(resumed_request))
    parent.close()


def test_an_unknown_type_or_task_is_an_error_for_the_model(
    llm: LLM, llm_server: ScriptedLLMServer, workspace: Path
) -> None:
    _script_task(llm_server, prompt="x", subagent_type="nobody")
    _script_task(llm_server, prompt="x", subagent_type="worker", resume="task_99")
    llm_server.reply_tool_call("finish", {"message": "gave up"})
    parent = _parent(llm, workspace)
    parent.send_message("go")

    parent.run()

    unknown, missing = _observations(parent)
    assert unknown.is_error and "Unknown agent 'nobody'" in unknown.text
    assert "worker" in unknown.text  # the types it could have chosen
    assert missing.is_error and "Task 'task_99' not found" in missing.text
    parent.close()


def _runner_tries(server: ScriptedLLMServer, command: str) -> None:
    _script_task(server, prompt="make the file", subagent_type="runner")
    server.reply_tool_call("terminal", {"command": command})  # the sub-agent


def test_a_sub_agents_action_needing_approval_is_never_run_unasked(
    llm: LLM, llm_server: ScriptedLLMServer, workspace: Path
) -> None:
    _runner_tries(llm_server, "touch made.txt")
    llm_server.reply_tool_call("finish", {"message": "could not"})
    parent = _parent(llm, workspace)
    parent.set_confirmation_policy(AlwaysConfirm())
    parent.send_message("go")
    parent.run()  # the task action waits for the user
    assert parent.state.execution_status is ConversationExecutionStatus.WAITING_FOR_CONFIRMATION

    parent.run()  # the user confirms the task; the sub-agent's own action then waits

    assert not (workspace / "made.txt").exists()
    (observation,) = _observations(parent)
    assert observation.is_error
    assert "'terminal' action needed the user's approval" in observation.text
    parent.close()


def test_a_confirmation_handler_decides_a_sub_agents_actions(
    llm: LLM, llm_server: ScriptedLLMServer, workspace: Path
) -> None:
    asked: list[tuple[str, list[str]]] = []

    def approve(label: str, pending: list[ActionEvent]) -> bool:
        asked.append((label, [a.tool_name for a in pending]))
        return True

    _runner_tries(llm_server, "touch made.txt")
    llm_server.reply_tool_call("finish", {"message": "made it"})  # the sub-agent
    llm_server.reply_tool_call("finish", {"message": "done"})  # the parent
    parent = _parent(llm, workspace, confirmation_handler=approve)
    parent.set_confirmation_policy(AlwaysConfirm())
    parent.send_message("go")
    parent.run()

    parent.run()

    assert (workspace / "made.txt").exists()
    assert asked == [("task_00000001", ["terminal"])]  # (finish never waits)
    assert _observations(parent)[0].text == "made it"
    parent.close()


def test_the_parents_blocking_hooks_stop_a_sub_agents_action(
    llm: LLM, llm_server: ScriptedLLMServer, workspace: Path
) -> None:
    blocker = {"type": "command", "command": "echo no terminal here >&2; exit 2"}
    hooks = HookConfig.model_validate({"PreToolUse": [{"matcher": "terminal", "hooks": [blocker]}]})
    _runner_tries(llm_server, "touch made.txt")
    llm_server.reply_tool_call("finish", {"message": "blocked"})  # the sub-agent
    llm_server.reply_tool_call("finish", {"message": "done"})  # the parent
    agent = Agent(llm=llm, tools=[Tool(name=TaskToolSet.name)])
    parent = LocalConversation(agent=agent, workspace=workspace, visualizer=None, hook_config=hooks)
    parent.send_message("go")

    parent.run()

    assert not (workspace / "made.txt").exists()
    sub_saw = json.dumps(llm_server.requests[2]["messages"])
    assert "Blocked by" in sub_saw and "no terminal here" in sub_saw
    parent.close()


def test_a_sub_agent_uses_the_parents_secrets_and_never_shows_them(
    llm: LLM, llm_server: ScriptedLLMServer, workspace: Path
) -> None:
    _runner_tries(llm_server, "printf %s $API_TOKEN > token.txt; echo $API_TOKEN")
    llm_server.reply_tool_call("finish", {"message": f"the token is {SECRET}"})
    llm_server.reply_tool_call("finish", {"message": "done"})
    parent = _parent(llm, workspace)
    parent.update_secrets({"API_TOKEN": SECRET})
    parent.send_message("go")

    parent.run()

    assert (workspace / "token.txt").read_text() == SECRET  # usable by name
    assert SECRET not in json.dumps(llm_server.requests[2]["messages"])  # masked for its model
    (observation,) = _observations(parent)
    assert SECRET not in observation.text and "<secret-hidden>" in observation.text
    parent.close()


def test_a_sub_agent_cannot_spend_past_the_parents_budget(
    llm: LLM, llm_server: ScriptedLLMServer, workspace: Path
) -> None:
    _script_task(llm_server, prompt="think a lot", subagent_type="worker")
    llm_server.reply_tool_call("think", {"thought": "hmm"})  # the sub-agent's one step
    llm_server.reply_tool_call("finish", {"message": "stopped"})
    parent = _parent(llm, workspace)
    parent.max_budget_per_run = 1e-9 + 0.0  # anything spent is over it
    parent.send_message("go")

    parent.run()

    assert len(llm_server.requests) == 2  # the sub-agent stopped after one call
    (observation,) = _observations(parent)
    assert observation.is_error and "budget" in observation.text
    parent.close()


def test_pausing_the_parent_pauses_its_sub_agent(
    llm: LLM, llm_server: ScriptedLLMServer, workspace: Path
) -> None:
    _script_task(llm_server, prompt="work slowly", subagent_type="worker")
    llm_server.reply_tool_call("think", {"thought": "slow"}, delay=0.5)
    parent = _parent(llm, workspace)
    parent.send_message("go")
    runner = threading.Thread(target=parent.run)
    runner.start()
    deadline = time.monotonic() + 5
    while len(llm_server.requests) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)

    parent.pause()
    runner.join(10)

    assert not runner.is_alive()
    assert parent.state.execution_status is ConversationExecutionStatus.PAUSED
    assert len(llm_server.requests) == 2  # neither went on after the pause
    (observation,) = _observations(parent)
    assert observation.is_error and "paused" in observation.text
    parent.close()


def test_tasks_of_one_step_run_at_the_same_time(
    llm: LLM, llm_server: ScriptedLLMServer, workspace: Path
) -> None:
    def answer(body: dict[str, Any]) -> Reply:
        offered = {t["function"]["name"] for t in body.get("tools") or []}
        said = "all done" if "task" in offered else "echo: " + _user_texts(body)[-1]
        arguments = json.dumps({"message": said})
        return Reply(tool_calls=(ToolCall("finish", arguments),), delay=0.3)

    llm_server.reply_tool_calls(
        [
            ("task", {"prompt": "alpha", "subagent_type": "worker"}),
            ("task", {"prompt": "beta", "subagent_type": "worker"}),
        ]
    )
    llm_server.set_default(answer)
    agent = Agent(llm=llm, tools=[Tool(name=TaskToolSet.name)], tool_concurrency_limit=2)
    parent = LocalConversation(agent=agent, workspace=workspace, visualizer=None)
    parent.send_message("both at once")

    parent.run()

    first, second = _observations(parent)
    assert (first.text, second.text) == ("echo: alpha", "echo: beta")  # in the calls' order
    assert {first.task_id, second.task_id} == {"task_00000001", "task_00000002"}
    (a_start, a_end), (b_start, b_end) = llm_server.request_times[1:3]
    assert a_start < b_end and b_start < a_end  # the two sub-agents asked at the same time
    parent.close()
