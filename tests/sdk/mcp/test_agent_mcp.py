"""MCP tools in real conversations: the scripted LLM server calls real MCP servers'
tools through the agent. Statements 2, 4, 6-10 of the notes, end to end."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

import pytest
from llm_server import ScriptedLLMServer
from mcp_servers import mcp_children, ours, time_server

from ohtui.sdk import (
    LLM,
    ActionEvent,
    Agent,
    AgentErrorEvent,
    ConversationExecutionStatus,
    LocalConversation,
    ObservationEvent,
)
from ohtui.sdk.conversation import StaticSecret
from ohtui.sdk.event.base import Event
from ohtui.sdk.mcp import MCPToolAction, MCPToolObservation
from ohtui.sdk.security.approval_rules import ApprovalRule, ApprovalRulesPolicy
from ohtui.sdk.security.confirmation_policy import ConfirmRisky, NeverConfirm
from ohtui.sdk.security.pattern_analyzer import PatternSecurityAnalyzer
from ohtui.sdk.security.risk import SecurityRisk

T = TypeVar("T")
Status = ConversationExecutionStatus


def of_type(events: Sequence[Event], cls: type[T]) -> list[T]:
    return [e for e in events if isinstance(e, cls)]


@pytest.fixture
def make(llm: LLM, workspace: Path, persistence_dir: Path) -> Iterator[Any]:
    """A conversation whose agent has these MCP servers (mcpServers settings)."""
    made: list[LocalConversation] = []

    def build(servers: dict[str, Any], **kwargs: Any) -> LocalConversation:
        agent = Agent(llm=llm, mcp_config=servers)
        conversation = LocalConversation(
            agent=agent,
            workspace=workspace,
            persistence_dir=persistence_dir,
            visualizer=None,
            **kwargs,
        )
        made.append(conversation)
        return conversation

    yield build
    for conversation in made:
        conversation.close()


def tool_entries(request: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["function"]["name"]: t["function"] for t in request["tools"]}


def test_convert_time_end_to_end_and_no_child_left(
    make: Any, llm_server: ScriptedLLMServer
) -> None:
    conversation = make({"time": time_server()})
    conversation.set_confirmation_policy(NeverConfirm())
    arguments = {"source_timezone": "UTC", "time": "09:30", "target_timezone": "Asia/Tokyo"}
    llm_server.reply_tool_call("time_convert_time", arguments)
    llm_server.reply_text("It is 18:30 in Tokyo.")
    conversation.send_message("What is 09:30 UTC in Tokyo?")
    conversation.run()

    [observation] = of_type(conversation.state.events, ObservationEvent)
    assert isinstance(observation.observation, MCPToolObservation)
    assert observation.observation.server == "time"
    assert "Asia/Tokyo" in observation.observation.text
    assert "18:30" in observation.observation.text
    # The model saw the result, and the server's own schema was offered.
    second = llm_server.requests[1]
    assert any("Asia/Tokyo" in json.dumps(m) for m in second["messages"] if m["role"] == "tool")
    entry = tool_entries(llm_server.requests[0])["time_convert_time"]
    assert entry["description"].startswith("Convert time between timezones")
    params = entry["parameters"]
    assert params["required"] == ["source_timezone", "time", "target_timezone"]
    assert set(params["properties"]) == {"summary", "source_timezone", "time", "target_timezone"}
    assert conversation.state.execution_status is Status.FINISHED
    assert mcp_children()
    conversation.close()
    deadline = time.monotonic() + 5
    while mcp_children() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert mcp_children() == []


def test_bad_arguments_and_error_results_reach_the_model(
    make: Any, llm_server: ScriptedLLMServer
) -> None:
    conversation = make({"t": ours()})
    conversation.set_confirmation_policy(NeverConfirm())
    llm_server.reply_tool_call("t_add", {"a": "two", "b": None})
    llm_server.reply_tool_call("t_fail", {"msg": "boom"})
    llm_server.reply_tool_call("t_add", {"a": 2, "b": 3, "extra": None})
    llm_server.reply_text("done")
    conversation.send_message("go")
    conversation.run()

    [error] = of_type(conversation.state.events, AgentErrorEvent)
    assert "Invalid arguments for tool 't_add' (MCP server 't')" in error.error
    assert "'two' is not of type 'integer'" in error.error
    failed, added = of_type(conversation.state.events, ObservationEvent)
    assert failed.observation.is_error and "boom" in failed.observation.text
    assert added.observation.text == "5" and not added.observation.is_error
    [action] = [e for e in of_type(conversation.state.events, ActionEvent) if e.action][-1:]
    assert isinstance(action.action, MCPToolAction)
    assert action.action.data == {"a": 2, "b": 3}  # None dropped
    assert conversation.state.execution_status is Status.FINISHED


def test_a_failed_server_leaves_the_conversation_going(
    make: Any, llm_server: ScriptedLLMServer
) -> None:
    conversation = make({"broken": ours("--crash-on-start"), "t": ours("--name", "t")})
    conversation.set_confirmation_policy(NeverConfirm())
    llm_server.reply_tool_call("t_add", {"a": 1, "b": 1})
    llm_server.reply_text("done")
    conversation.send_message("go")
    conversation.run()
    [observation] = of_type(conversation.state.events, ObservationEvent)
    assert observation.observation.text == "2"
    manager = conversation.agent.mcp
    assert manager is not None
    broken = {s.name: s for s in manager.servers()}["broken"]
    assert "fatal: cannot open the database" in (broken.error or "")


def test_secrets_are_expanded_in_arguments_and_masked_in_results(
    make: Any, llm_server: ScriptedLLMServer
) -> None:
    conversation = make({"t": ours()}, secrets={"API_TOKEN": StaticSecret(value="s3cr3t-value")})
    conversation.set_confirmation_policy(NeverConfirm())
    llm_server.reply_tool_call("t_echo", {"text": "token=${API_TOKEN}"})
    llm_server.reply_text("done")
    conversation.send_message("go")
    conversation.run()
    [observation] = of_type(conversation.state.events, ObservationEvent)
    text = observation.observation.text
    assert text.startswith("echo: token=") and "s3cr3t-value" not in text
    assert text == "echo: token=<secret-hidden>"
    dumped = json.dumps([e.model_dump(mode="json") for e in conversation.state.events])
    assert "s3cr3t-value" not in dumped
    assert "s3cr3t-value" not in json.dumps(llm_server.requests[1]["messages"])


def test_read_only_tools_run_and_others_wait_under_confirm_risky(
    make: Any, llm_server: ScriptedLLMServer
) -> None:
    conversation = make({"t": ours()})
    # ohtui's "risky": an MCP tool not marked read-only is MEDIUM, whatever it says.
    conversation.set_confirmation_policy(ConfirmRisky(threshold=SecurityRisk.MEDIUM))
    conversation.set_security_analyzer(PatternSecurityAnalyzer())
    llm_server.reply_tool_call("t_add", {"a": 1, "b": 2})
    llm_server.reply_tool_call("t_sleep", {"seconds": 0})
    conversation.send_message("go")
    conversation.run()
    assert conversation.state.execution_status is Status.WAITING_FOR_CONFIRMATION
    [observation] = of_type(conversation.state.events, ObservationEvent)
    assert observation.observation.text == "3"
    pending = conversation.state.get_unmatched_actions(conversation.state.events)
    assert [a.tool_name for a in pending] == ["t_sleep"]


def test_an_allow_rule_can_name_an_mcp_tool(make: Any, llm_server: ScriptedLLMServer) -> None:
    conversation = make({"t": ours()})
    rules = [ApprovalRule(tool="mcp:t/sleep"), ApprovalRule(tool="mcp:other/*")]
    conversation.set_confirmation_policy(
        ApprovalRulesPolicy(rules=rules, fallback=ConfirmRisky(threshold=SecurityRisk.MEDIUM))
    )
    conversation.set_security_analyzer(PatternSecurityAnalyzer())
    llm_server.reply_tool_call("t_sleep", {"seconds": 0})
    llm_server.reply_tool_call("t_fail", {"msg": "x"})
    conversation.send_message("go")
    conversation.run()
    [slept] = of_type(conversation.state.events, ObservationEvent)
    assert slept.observation.text == "slept 0.0"
    pending = conversation.state.get_unmatched_actions(conversation.state.events)
    assert [a.tool_name for a in pending] == ["t_fail"]  # no rule covers it: it asks


def test_interrupt_cancels_an_in_flight_call(make: Any, llm_server: ScriptedLLMServer) -> None:
    conversation = make({"t": ours()})
    conversation.set_confirmation_policy(NeverConfirm())
    llm_server.reply_tool_call("t_sleep", {"seconds": 30})
    conversation.send_message("go")
    runner = threading.Thread(target=conversation.run)
    runner.start()
    deadline = time.monotonic() + 30
    while not of_type(conversation.state.events, ActionEvent) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)
    started = time.monotonic()
    conversation.interrupt()
    runner.join(10)
    assert not runner.is_alive()
    assert time.monotonic() - started < 5
    [observation] = of_type(conversation.state.events, ObservationEvent)
    assert observation.observation.is_error
    assert "interrupted" in observation.observation.text
    assert conversation.state.execution_status is Status.PAUSED


def test_resume_without_the_server_opens_and_tells_the_model(
    llm: LLM, workspace: Path, persistence_dir: Path, llm_server: ScriptedLLMServer
) -> None:
    first = LocalConversation(
        agent=Agent(llm=llm, mcp_config={"t": ours()}),
        workspace=workspace,
        persistence_dir=persistence_dir,
        visualizer=None,
    )
    first.set_confirmation_policy(NeverConfirm())
    llm_server.reply_tool_call("t_add", {"a": 1, "b": 2})
    llm_server.reply_text("3")
    first.send_message("add")
    first.run()
    conversation_id = first.id
    first.close()

    again = LocalConversation(
        agent=Agent(llm=llm),
        workspace=workspace,
        persistence_dir=persistence_dir,
        conversation_id=conversation_id,
        visualizer=None,
    )
    try:
        [old] = of_type(again.state.events, ObservationEvent)
        assert isinstance(old.observation, MCPToolObservation)  # read back typed
        llm_server.reply_tool_call("t_add", {"a": 2, "b": 2})
        llm_server.reply_text("The tool is gone.")
        again.send_message("again")
        again.run()
        [error] = of_type(again.state.events, AgentErrorEvent)
        assert "There is no tool named 't_add' now" in error.error
        assert "MCP server 't'" in error.error and "not configured" in error.error
        assert again.state.execution_status is Status.FINISHED
    finally:
        again.close()


def test_importing_the_sdk_does_not_import_mcp() -> None:
    code = (
        "import sys, ohtui.sdk, ohtui.sdk.mcp\n"
        "print([m for m in sys.modules if m == 'mcp' or m.startswith('mcp.')])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_help_does_not_import_mcp() -> None:
    code = (
        "import sys, runpy\n"
        "sys.argv = ['ohtui', '--help']\n"
        "try:\n    runpy.run_module('ohtui.cli', run_name='__main__')\n"
        "except SystemExit:\n    pass\n"
        "print('MCP-LOADED' if 'mcp' in sys.modules else 'MCP-ABSENT')"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().endswith("MCP-ABSENT")


def ask_for_the_token(
    make: Any, llm_server: ScriptedLLMServer, token: str, **kwargs: Any
) -> tuple[LocalConversation, ObservationEvent]:
    """A conversation whose server has the secret TOKEN as SERVICE_TOKEN in its `env`, run
    through the model asking the server for it; the answer's observation."""
    server = ours(env={"SERVICE_TOKEN": "${TOKEN}"})
    conversation = make({"t": server}, secrets={"TOKEN": StaticSecret(value=token)}, **kwargs)
    conversation.set_confirmation_policy(NeverConfirm())
    llm_server.reply_tool_call("t_getenv", {"name": "SERVICE_TOKEN"})
    llm_server.reply_text("done")
    conversation.send_message("go")
    conversation.run()
    [observation] = of_type(conversation.state.events, ObservationEvent)
    return conversation, observation


def test_a_secret_named_in_env_reaches_the_server_and_is_masked_back(
    make: Any, llm_server: ScriptedLLMServer
) -> None:
    conversation, observation = ask_for_the_token(make, llm_server, "tok-1234567")
    assert observation.observation.text == "<secret-hidden>"  # the server had the value
    assert "tok-1234567" not in json.dumps(conversation.agent.model_dump(mode="json"))


def test_deferred_servers_start_on_start_mcp_or_with_the_first_step(
    make: Any, llm_server: ScriptedLLMServer
) -> None:
    held = make({"t": ours()}, defer_mcp=True)
    assert held.agent.mcp is not None
    [server] = held.agent.mcp.servers()
    assert server.summary == "starting"
    time.sleep(0.5)
    assert mcp_children() == []  # nothing started yet
    held.start_mcp()
    held.start_mcp()  # idempotent
    assert held.agent.mcp.wait_settled()
    assert [s.summary for s in held.agent.mcp.servers()] == ["ready, 6 tools"]
    held.close()

    # Never started by hand: the first step starts them, with the conversation's secrets.
    _, observation = ask_for_the_token(make, llm_server, "tok-7654321", defer_mcp=True)
    assert observation.observation.text == "<secret-hidden>"  # the server had the value
    assert "t_getenv" in tool_entries(llm_server.requests[0])


def test_a_call_saved_under_its_old_name_resumes_and_runs_by_its_server(
    llm: LLM, workspace: Path, persistence_dir: Path, llm_server: ScriptedLLMServer
) -> None:
    from ohtui.sdk.llm import MessageToolCall

    # Saved before MCP tools were named by server: the waiting call is called "sleep".
    first = LocalConversation(
        agent=Agent(llm=llm), workspace=workspace, persistence_dir=persistence_dir, visualizer=None
    )
    waiting = ActionEvent(
        action=MCPToolAction(server="t", tool="sleep", data={"seconds": 0}),
        tool_name="sleep",
        tool_call_id="c1",
        tool_call=MessageToolCall(id="c1", name="sleep", arguments='{"seconds": 0}'),
        llm_response_id="r1",
        security_risk=SecurityRisk.MEDIUM,
    )
    first.state.events.append(waiting)
    conversation_id = first.id
    first.close()

    again = LocalConversation(
        agent=Agent(llm=llm, mcp_config={"t": ours()}),
        workspace=workspace,
        persistence_dir=persistence_dir,
        conversation_id=conversation_id,
        visualizer=None,
    )
    try:
        [pending] = again.state.get_unmatched_actions(again.state.events)
        assert pending.tool_name == "sleep" and pending.action is not None
        assert str(pending.action.visualize).startswith("t/sleep")  # shown by its server
        # An allow rule keyed to the new name covers it.
        again.set_confirmation_policy(
            ApprovalRulesPolicy(rules=[ApprovalRule(tool="t_sleep")], fallback=ConfirmRisky())
        )
        llm_server.reply_tool_call("sleep", {"seconds": 0})  # the model uses the old name
        llm_server.reply_text("done")
        again.run()
        ran = [
            e for e in of_type(again.state.events, ObservationEvent) if e.action_id == pending.id
        ]
        assert ran and ran[0].observation.text == "slept 0.0"
        [error] = of_type(again.state.events, AgentErrorEvent)
        assert "There is no tool named 'sleep': it is called 't_sleep' now" in error.error
        assert again.state.execution_status is Status.FINISHED
    finally:
        again.close()
