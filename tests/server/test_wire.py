"""The wire codec: our events as OpenHands 1.58 JSON, and OpenHands agent payloads as ours.

Frames are checked against `openhands_fields.json`, the OpenHands 1.58 event schema's field
names recorded from the real SDK (record_openhands_fields.py), so no peer is needed here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from llm_server import ScriptedLLMServer
from serve_helpers import agent_payload

from ohtui.sdk import LLM, Agent, Tool
from ohtui.sdk.conversation.impl.local_conversation import LocalConversation
from ohtui.sdk.event import (
    ActionEvent,
    ConversationErrorEvent,
    Event,
    HookExecutionEvent,
    InterruptEvent,
    ObservationEvent,
    SystemPromptEvent,
    TokenEvent,
)
from ohtui.sdk.security import AlwaysConfirm
from ohtui.sdk.wire.agent_in import (
    REDACTED,
    WireError,
    agent_from_wire,
    confirmation_policy_from_wire,
    redacted,
    secrets_from_wire,
)
from ohtui.sdk.wire.events_out import event_to_wire, streaming_delta

SCHEMA = json.loads((Path(__file__).parent / "openhands_fields.json").read_text())


def check_frame(frame: dict[str, Any]) -> None:
    """AssertionError unless `frame` fits the recorded OpenHands schema (fields and kinds)."""
    kind = frame["kind"]
    assert kind in SCHEMA["events"], f"OpenHands has no event kind {kind}"
    _check(frame, SCHEMA["events"][kind], kind)
    if "action" in frame:
        action = frame["action"]
        assert action["kind"] in SCHEMA["actions"], action["kind"]
        _check(action, SCHEMA["actions"][action["kind"]], action["kind"])
    if "observation" in frame:
        observation = frame["observation"]
        assert observation["kind"] in SCHEMA["observations"], observation["kind"]
        _check(observation, SCHEMA["observations"][observation["kind"]], observation["kind"])
    json.dumps(frame)  # JSON-ready


def _check(data: dict[str, Any], fields: dict[str, list[str]], kind: str) -> None:
    extra = set(data) - set(fields["allowed"])
    missing = set(fields["required"]) - set(data)
    assert not extra, f"{kind}: fields OpenHands forbids: {sorted(extra)}"
    assert not missing, f"{kind}: fields OpenHands requires: {sorted(missing)}"


@pytest.fixture
def recorded(llm_server: ScriptedLLMServer, tmp_path: Path) -> list[Event]:
    """The events of a run that uses every built-in tool, a rejection and a pause."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    llm = LLM(
        model="openai/test-model", base_url=llm_server.base_url, api_key="sk-x", num_retries=0
    )
    tools = [Tool(name="terminal"), Tool(name="file_editor"), Tool(name="task_tracker")]
    conversation = LocalConversation(
        Agent(llm=llm, tools=tools),
        workspace=workspace,
        persistence_dir=tmp_path / "p",
        visualizer=None,
    )
    path = str(workspace / "a.txt")
    llm_server.reply_tool_call("terminal", {"command": "echo hi", "security_risk": "LOW"})
    llm_server.reply_tool_call(
        "file_editor",
        {"command": "create", "path": path, "file_text": "x\n", "security_risk": "LOW"},
    )
    llm_server.reply_tool_call(
        "file_editor", {"command": "view", "path": path, "security_risk": "LOW"}
    )
    llm_server.reply_tool_call(
        "task_tracker", {"command": "plan", "task_list": [{"title": "t", "status": "todo"}]}
    )
    llm_server.reply_tool_call("think", {"thought": "hmm"})
    llm_server.reply_tool_call("no_such_tool", {"x": 1})
    llm_server.reply_tool_call("finish", {"message": "done"})
    try:
        conversation.send_message("hello")
        conversation.run()
        conversation.set_confirmation_policy(AlwaysConfirm())
        llm_server.reply_tool_call("terminal", {"command": "echo no", "security_risk": "LOW"})
        conversation.send_message("again")
        conversation.run()
        conversation.reject_pending_actions("nope")
        conversation.pause()
        return list(conversation.state.events)
    finally:
        conversation.close()


def test_every_recorded_event_fits_the_openhands_schema(recorded: list[Event]) -> None:
    extra: list[Event] = [
        InterruptEvent(),
        HookExecutionEvent(
            hook_event_type="PreToolUse",
            hook_command="check.sh",
            success=True,
            tool_name="terminal",
            exit_code=2,
            blocked=True,
            reason="no",
        ),
        ConversationErrorEvent(code="LLMError", detail="down", source="environment"),
    ]
    frames = [event_to_wire(event) for event in [*recorded, *extra]]
    sent = [frame for frame in frames if frame is not None]
    assert len(sent) == len(frames)  # every kind of this run has an OpenHands counterpart
    kinds = {frame["kind"] for frame in sent}
    assert {
        "SystemPromptEvent",
        "ActionEvent",
        "ObservationEvent",
        "UserRejectObservation",
        "AgentErrorEvent",
        "PauseEvent",
        "InterruptEvent",
    } <= kinds
    for frame in sent:
        check_frame(frame)
    check_frame(streaming_delta("tok", None))


def test_terminal_observation_is_reshaped(recorded: list[Event]) -> None:
    observation = next(
        e for e in recorded if isinstance(e, ObservationEvent) and e.tool_name == "terminal"
    )
    frame = event_to_wire(observation)
    assert frame is not None
    wire = frame["observation"]
    assert wire["timeout"] is False  # ours is the limit in seconds; OpenHands' a bool
    assert wire["metadata"]["exit_code"] == 0
    assert wire["metadata"]["working_dir"]
    assert "timed_out" not in wire and "working_dir" not in wire


def test_ohtui_only_fields_and_tools_are_dropped(recorded: list[Event]) -> None:
    action = next(e for e in recorded if isinstance(e, ActionEvent))
    frame = event_to_wire(action)
    assert frame is not None and "security_risk_reason" not in frame
    system = event_to_wire(next(e for e in recorded if isinstance(e, SystemPromptEvent)))
    assert system is not None
    assert [t["kind"] for t in system["tools"]] == [
        "TerminalTool",
        "FileEditorTool",
        "TaskTrackerTool",
        "FinishTool",
        "ThinkTool",
    ]
    unknown = next(
        e for e in recorded if isinstance(e, ActionEvent) and e.tool_name == "no_such_tool"
    )
    assert "action" not in (event_to_wire(unknown) or {})  # it never parsed: no action at all


def test_unknown_tool_actions_travel_as_mcp_shapes() -> None:
    from ohtui.sdk.wire.events_out import _action_to_wire, _observation_to_wire

    assert _action_to_wire({"kind": "MyAction", "x": 1}) == {
        "data": {"x": 1},
        "kind": "MCPToolAction",
    }
    observation = _observation_to_wire(
        {"kind": "MyObservation", "content": [], "is_error": True}, "mine"
    )
    assert observation == {
        "content": [],
        "is_error": True,
        "tool_name": "mine",
        "kind": "MCPToolObservation",
    }


def test_events_without_counterpart_are_not_sent() -> None:
    assert event_to_wire(TokenEvent(prompt_token_ids=[1], response_token_ids=[2])) is None


def test_state_update_value_is_json() -> None:
    from ohtui.sdk.event import ConversationStateUpdateEvent

    frame = event_to_wire(ConversationStateUpdateEvent(key="execution_status", value="running"))
    assert frame is not None
    assert frame["value"] == "running" and frame["key"] == "execution_status"
    check_frame(frame)


# --- inbound agent ---------------------------------------------------------------------


def test_openhands_agent_payload_builds_our_agent(llm_server: ScriptedLLMServer) -> None:
    payload = agent_payload(llm_server, tools=("terminal", "file_editor", "task_tracker"))
    payload["llm"]["temperature"] = 0.2
    payload["llm"]["reasoning_effort"] = "xhigh"  # not ours: dropped, not fatal
    agent = agent_from_wire(payload)
    assert [t.name for t in agent.tools] == ["terminal", "file_editor", "task_tracker"]
    assert agent.llm.model == "openai/test-model"
    assert agent.llm.api_key is not None
    assert agent.llm.api_key.get_secret_value() == "sk-test-0123456789abcdef"
    assert agent.llm.temperature == 0.2 and agent.llm.reasoning_effort is None
    assert agent.llm.num_retries == 0 and agent.llm.usage_id == "agent"


def test_a_client_does_not_choose_places_on_the_servers_disk(
    llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    payload = agent_payload(llm_server)
    payload["llm"]["log_completions"] = True
    payload["llm"]["log_completions_folder"] = str(tmp_path / "client-chosen")
    payload["llm"]["fallback_strategy"] = {
        "fallback_llms": ["theirs"],
        "profile_store_dir": str(tmp_path / "profiles"),
    }
    llm = agent_from_wire(payload).llm
    assert llm.log_completions
    assert llm.log_completions_folder == LLM(model="m").log_completions_folder
    assert llm.fallback_strategy is None


def test_unknown_tool_is_a_clear_error(llm_server: ScriptedLLMServer) -> None:
    payload = agent_payload(llm_server, tools=("terminal", "browser_tool_set"))
    with pytest.raises(
        WireError, match=r"agent.tools\[1\]: unknown tool 'browser_tool_set'.*terminal"
    ):
        agent_from_wire(payload)


def test_agent_without_model_is_a_clear_error() -> None:
    with pytest.raises(WireError, match=r"agent\.llm must be an object with a 'model'"):
        agent_from_wire({"kind": "Agent", "llm": {"api_key": "x"}, "tools": []})
    with pytest.raises(WireError, match="agent kind 'ACPAgent' is not supported"):
        agent_from_wire({"kind": "ACPAgent", "llm": {"model": "m"}, "tools": []})


def test_tool_params_we_do_not_take_are_dropped(llm_server: ScriptedLLMServer) -> None:
    payload = agent_payload(llm_server)
    payload["tools"] = [
        {
            "name": "terminal",
            "params": {"timeout": 30, "no_change_timeout_seconds": 5, "terminal_type": "tmux"},
        }
    ]
    agent = agent_from_wire(payload)
    assert agent.tools[0].params == {"timeout": 30, "no_change_timeout_seconds": 5}


def test_redaction_hides_every_api_key(llm_server: ScriptedLLMServer) -> None:
    payload = agent_payload(llm_server)
    payload["condenser"] = {
        "kind": "LLMSummarizingCondenser",
        "llm": {"model": "m", "api_key": "sk-2"},
    }
    text = json.dumps(redacted(payload))
    assert "sk-test-0123456789abcdef" not in text and "sk-2" not in text
    assert text.count(REDACTED) == 2


def test_policies_and_secrets_from_wire() -> None:
    policy = confirmation_policy_from_wire({"kind": "ConfirmRisky", "threshold": "MEDIUM", "x": 1})
    assert type(policy).__name__ == "ConfirmRisky"
    with pytest.raises(WireError, match="confirmation_policy: Unexpected kind 'Sometimes'"):
        confirmation_policy_from_wire({"kind": "Sometimes"})
    secrets = secrets_from_wire({"A": "1", "B": {"kind": "StaticSecret", "value": "2"}})
    assert secrets["A"] == "1" and type(secrets["B"]).__name__ == "StaticSecret"


def test_a_client_that_asks_gets_the_risk_reason(recorded: list[Event]) -> None:
    action = next(e for e in recorded if isinstance(e, ActionEvent))
    action = action.model_copy(update={"security_risk_reason": "pattern rules: (rule r1)"})
    assert "security_risk_reason" not in (event_to_wire(action) or {})
    ours = event_to_wire(action, ohtui_fields=True)
    assert ours is not None and ours["security_risk_reason"] == "pattern rules: (rule r1)"


@pytest.mark.parametrize(
    ("policy", "reported"),
    [
        (None, "NeverConfirm"),
        ({"kind": "AlwaysConfirm"}, "AlwaysConfirm"),
        (
            {"kind": "ApprovalRulesPolicy", "rules": [], "fallback": {"kind": "AlwaysConfirm"}},
            "AlwaysConfirm",
        ),
        (
            {
                "kind": "ApprovalRulesPolicy",
                "fallback": {"kind": "ConfirmRisky", "threshold": "MEDIUM"},
            },
            "ConfirmRisky",
        ),
        ({"kind": "ApprovalRulesPolicy", "fallback": {"kind": "NeverConfirm"}}, "NeverConfirm"),
        ({"kind": "SomethingNew"}, "AlwaysConfirm"),
    ],
)
def test_the_reported_policy_is_the_one_that_asks(policy: Any, reported: str) -> None:
    """A rules policy is reported as the policy it falls back to (the one the user chose);
    ohtui's whole policy travels beside it for ohtui's client."""
    from ohtui.server.info import policy_to_wire, updates_to_wire

    assert policy_to_wire(policy)["kind"] == reported
    if policy is not None:
        updates = dict(updates_to_wire("confirmation_policy", policy))
        assert updates["ohtui_confirmation_policy"] == policy
        assert updates["confirmation_policy"]["kind"] == reported


def test_a_policy_the_client_cannot_read_asks_for_everything() -> None:
    from ohtui.sdk import AlwaysConfirm, NeverConfirm
    from ohtui.sdk.wire.state_in import policy_from_wire

    assert isinstance(policy_from_wire({"kind": "SomethingNew"}), AlwaysConfirm)
    assert isinstance(policy_from_wire("garbage"), AlwaysConfirm)
    assert isinstance(policy_from_wire(None), NeverConfirm)  # none set: the protocol default


def test_checkpoint_events_reach_only_a_client_that_reads_ohtui_kinds() -> None:
    """An OpenHands client validates every frame against its own kinds: ohtui's checkpoint
    events are left out for it, and cross whole to ours, typed again on arrival."""
    from ohtui.sdk.event import CheckpointEvent, CheckpointRestoreEvent, FileChangeRecord
    from ohtui.sdk.wire.events_in import event_from_wire

    taken = CheckpointEvent(checkpoint_id="c0ffee12" * 5, action_id="a1", label="echo x", files=3)
    restored = CheckpointRestoreEvent(
        checkpoint_id=taken.checkpoint_id or "",
        label="echo x",
        undo_checkpoint_id="beef" * 10,
        changes=[FileChangeRecord(path="a.txt", status="deleted")],
    )
    for event in (taken, restored):
        assert event_to_wire(event) is None
        frame = event_to_wire(event, ohtui_fields=True)
        assert frame is not None and frame["kind"] == event.kind
        assert event_from_wire(json.loads(json.dumps(frame))) == event
