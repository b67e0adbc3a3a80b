"""The inbound codec reads every frame recorded from the real OpenHands 1.58 server, and the
agent payload we send has the shape OpenHands expects (statements 2 and 17)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, SecretStr

from ohtui.sdk import LLM, Agent, LLMSummarizingCondenser, Tool
from ohtui.sdk.event import (
    ActionEvent,
    ConversationErrorEvent,
    ConversationStateUpdateEvent,
    HookExecutionEvent,
    MessageEvent,
    ObservationEvent,
    SystemPromptEvent,
    UserRejectObservation,
)
from ohtui.sdk.mcp.definition import MCPToolAction
from ohtui.sdk.tools.terminal import TerminalAction, TerminalObservation
from ohtui.sdk.wire.agent_in import agent_from_wire
from ohtui.sdk.wire.agent_out import agent_to_wire
from ohtui.sdk.wire.events_in import (
    REMOTE_STREAM_ID,
    event_from_wire,
    is_streaming_delta,
    stream_chunk,
)
from ohtui.sdk.wire.foreign import ForeignAction, ForeignEvent, ForeignObservation
from ohtui.sdk.wire.state_in import stats_from_wire

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "agent_server"


def recording(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / f"{name}.json").read_text())


def first(events: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    return copy.deepcopy(next(e for e in events if e["kind"] == kind))


RECORDINGS = ["basic_turn", "confirm_reject", "streaming", "interrupt", "error"]


@pytest.mark.parametrize("name", RECORDINGS)
def test_every_recorded_frame_reads(name: str) -> None:
    data = recording(name)
    for frame in data["frames"] + data["events"]:
        if is_streaming_delta(frame):
            continue
        event = event_from_wire(frame)
        assert event.id == frame["id"]
        assert event.timestamp == frame["timestamp"]  # naive local time, kept as sent
        if frame["kind"] != "InterruptEvent":
            assert event.kind == frame["kind"], frame


def test_extra_fields_are_dropped_and_terminal_results_translated() -> None:
    events = recording("confirm_reject")["events"]
    action = event_from_wire(first(events, "ActionEvent"))
    assert isinstance(action, ActionEvent)
    assert isinstance(action.action, TerminalAction)
    assert action.action.command == "echo one"
    observation = event_from_wire(first(events, "ObservationEvent"))
    assert isinstance(observation, ObservationEvent)
    result = observation.observation
    assert isinstance(result, TerminalObservation)
    assert (result.text, result.exit_code, result.timed_out) == ("two", 0, False)
    assert result.working_dir == "/tmp"  # from the server's metadata
    reject = event_from_wire(first(events, "UserRejectObservation"))
    assert isinstance(reject, UserRejectObservation)
    assert reject.rejection_reason == "not now"


def test_a_timed_out_terminal_result_says_so() -> None:
    frame = first(recording("confirm_reject")["events"], "ObservationEvent")
    frame["observation"]["timeout"] = True
    event = event_from_wire(frame)
    assert isinstance(event, ObservationEvent)
    assert isinstance(event.observation, TerminalObservation)
    assert event.observation.timed_out is True


def test_system_prompt_tools_are_read_by_name() -> None:
    event = event_from_wire(first(recording("basic_turn")["events"], "SystemPromptEvent"))
    assert isinstance(event, SystemPromptEvent)
    assert event.tool_names == ["terminal", "finish", "think"]


def test_messages_errors_and_state_updates() -> None:
    events = recording("error")["events"]
    message = event_from_wire(first(events, "MessageEvent"))
    assert isinstance(message, MessageEvent)
    assert message.llm_message.text == "Fail please"
    error = event_from_wire(first(events, "ConversationErrorEvent"))
    assert isinstance(error, ConversationErrorEvent)
    assert error.code == "LLMBadRequestError"
    update = event_from_wire(first(events, "ConversationStateUpdateEvent"))
    assert isinstance(update, ConversationStateUpdateEvent)


def test_unknown_kinds_become_displayable_foreign_events() -> None:
    frame = {
        "id": "e1",
        "timestamp": "2026-11-23T16:56:53.010926",
        "source": "environment",
        "kind": "ServerErrorEvent",
        "code": "BadFrame",
        "detail": "could not parse the frame",
    }
    event = event_from_wire(frame)
    assert isinstance(event, ForeignEvent)
    assert event.foreign_kind == "ServerErrorEvent"
    assert event.summary == "Server error: could not parse the frame"
    assert "Server error" in event.visualize.plain
    odd = event_from_wire({"kind": "ACPToolCallEvent", "source": "martian", "id": "x"})
    assert isinstance(odd, ForeignEvent) and odd.id == "x"


def test_their_mcp_call_is_ours_and_an_unknown_tools_action_and_result_keep_their_data() -> None:
    events = recording("confirm_reject")["events"]
    action_frame = first(events, "ActionEvent")
    action_frame["action"] = {"kind": "MCPToolAction", "data": {"url": "https://x"}}
    action = event_from_wire(action_frame)
    assert isinstance(action, ActionEvent)
    assert isinstance(action.action, MCPToolAction)  # theirs holds only the arguments
    assert (action.action.tool, action.action.data) == (action.tool_name, {"url": "https://x"})
    assert action.action.visualize.plain.startswith(f"{action.tool_name}\n")
    action_frame["action"] = {"kind": "BrowserNavigateAction", "url": "https://x"}
    action = event_from_wire(action_frame)
    assert isinstance(action, ActionEvent)
    assert isinstance(action.action, ForeignAction)  # still pending-able and shown
    assert action.action.foreign_kind == "BrowserNavigateAction"
    assert action.action.data == {"url": "https://x"}
    result_frame = first(events, "ObservationEvent")
    result_frame["observation"] = {
        "kind": "BrowserObservation",
        "content": [{"type": "text", "text": "page"}],
        "is_error": True,
        "screenshot": "...",
    }
    result = event_from_wire(result_frame)
    assert isinstance(result, ObservationEvent)
    assert isinstance(result.observation, ForeignObservation)
    assert (result.observation.text, result.observation.is_error) == ("page", True)


def test_openhands_hook_events_read_as_they_are() -> None:
    frame = {
        "id": "h1",
        "timestamp": "2026-11-23T16:56:53.010926",
        "source": "hook",
        "kind": "HookExecutionEvent",
        "hook_event_type": "PreToolUse",
        "hook_command": "./check.sh",
        "success": False,
        "blocked": True,
        "exit_code": 2,
        "stderr": "no",
        "parent_id": "x",
    }
    event = event_from_wire(frame)
    assert isinstance(event, HookExecutionEvent)
    assert (event.hook_event_type, event.hook_command, event.blocked, event.stderr) == (
        "PreToolUse",
        "./check.sh",
        True,
        "no",
    )
    assert (event.source, event.success, event.exit_code) == ("hook", False, 2)


def test_hook_events_of_earlier_ohtui_versions_still_read() -> None:
    frame = {
        "id": "h2",
        "timestamp": "2026-11-23T16:56:53.010926",
        "source": "environment",
        "kind": "HookExecutionEvent",
        "hook_event_name": "Stop",
        "command": "./done.sh",
        "exit_code": None,
        "error": "timed out after 5 s and was killed",
    }
    event = event_from_wire(frame)
    assert isinstance(event, HookExecutionEvent)
    assert (event.hook_event_type, event.hook_command, event.source) == (
        "Stop",
        "./done.sh",
        "hook",
    )
    assert (event.success, event.exit_code, event.error) == (
        False,
        -1,
        "timed out after 5 s and was killed",
    )


def test_streaming_deltas_become_token_chunks() -> None:
    frames = recording("streaming")["frames"]
    deltas = [f for f in frames if is_streaming_delta(f)]
    text = "".join(stream_chunk(f).content for f in deltas)
    assert text == "Streamed words arrive one by one."
    assert {stream_chunk(f).response_id for f in deltas} == {REMOTE_STREAM_ID}


def test_agent_payload_has_the_openhands_shape() -> None:
    llm = LLM(
        model="openai/test-model",
        base_url="http://127.0.0.1:1/v1",
        api_key=SecretStr("sk-secret"),
        usage_id="agent",
        num_retries=0,
    )
    condenser = LLMSummarizingCondenser(llm=llm.model_copy(update={"usage_id": "condenser"}))
    agent = Agent(llm=llm, tools=[Tool(name="terminal")], condenser=condenser)
    wire = agent_to_wire(agent)
    assert wire["kind"] == "Agent"
    assert wire["tools"] == [{"name": "terminal", "params": {}}]
    assert wire["llm"]["usage_id"] == "agent"
    assert wire["llm"]["api_key"] == "sk-secret"  # the server calls the model with it
    assert wire["llm"]["num_retries"] == 0
    assert isinstance(wire["llm"]["timeout"], int)
    assert "connect_timeout" not in wire["llm"]  # ours alone
    assert wire["condenser"]["kind"] == "LLMSummarizingCondenser"
    assert wire["condenser"]["llm"]["usage_id"] == "condenser"
    json.dumps(wire)  # JSON-ready


def test_their_per_call_usages_are_kept_and_found_by_response_id() -> None:
    stats = stats_from_wire(recording("basic_turn")["info_final"]["stats"])
    metrics = stats.usage_to_metrics["agent"]
    found = metrics.find_token_usage("chatcmpl-1")
    assert found is not None
    assert (found.prompt_tokens, found.completion_tokens) == (3896, 6)
    assert metrics.latest_token_usage == found


def test_a_server_s_lone_surrogates_are_made_valid_text() -> None:
    """A server may send JSON's "\\ud800" escape (its model did): the events and streamed
    tokens it becomes can be shown, saved and printed."""
    raw = recording("basic_turn")
    message = first(raw["events"], "MessageEvent")
    frame = json.loads(json.dumps(message).replace('"text": "', '"text": "\\ud800', 1))
    event = event_from_wire(frame)
    assert isinstance(event, MessageEvent)
    assert event.llm_message.text.startswith("\ufffd")
    event.model_dump_json()
    unknown = event_from_wire({"kind": "NoSuchEvent\ud800", "id": "x", "note": "\udfff"})
    assert isinstance(unknown, ForeignEvent)
    unknown.model_dump_json()
    delta = {"kind": "StreamingDeltaEvent", "content": "a\ud800", "reasoning_content": "\udfff"}
    chunk = stream_chunk(delta)
    assert (chunk.content, chunk.reasoning_content) == ("a\ufffd", "\ufffd")


def test_prompt_settings_and_response_schemas_cross_the_wire() -> None:
    class Rationale(BaseModel):
        purpose: str

    llm = LLM(model="openai/test-model", api_key=SecretStr("sk-secret"))
    agent = Agent(
        llm=llm,
        tools=[Tool(name="terminal", params={"response_schema": Rationale})],
        system_prompt_kwargs={"cli_mode": True},
    )
    wire = json.loads(json.dumps(agent_to_wire(agent)))  # what really travels: JSON
    assert wire["system_prompt_kwargs"] == {"cli_mode": True}
    assert wire["tools"][0]["params"]["response_schema"]["properties"]["purpose"]["type"] == (
        "string"
    )
    rebuilt = agent_from_wire(wire)
    assert rebuilt.system_prompt_kwargs == {"cli_mode": True}
    assert rebuilt.tools[0].params["response_schema"]["title"] == "Rationale"
