"""Tests for confirmation mode through the real engine: waiting, approving, rejecting.

The agent talks to the scripted OpenAI-compatible server (tests/llm_server.py) over real
HTTP through litellm, and the terminal tool runs a real bash.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

import pytest
from llm_server import ScriptedLLMServer

from ohtui.sdk import (
    LLM,
    ActionEvent,
    Agent,
    AgentErrorEvent,
    AlwaysConfirm,
    ConfirmRisky,
    Conversation,
    ConversationExecutionStatus,
    LLMSecurityAnalyzer,
    LocalConversation,
    NeverConfirm,
    ObservationEvent,
    PatternSecurityAnalyzer,
    PauseEvent,
    SecurityRisk,
    Tool,
    UserRejectObservation,
)
from ohtui.sdk.event.base import Event

Status = ConversationExecutionStatus
T = TypeVar("T")
Factory = Callable[..., LocalConversation]


@pytest.fixture
def make_conversation(llm: LLM, workspace: Path, persistence_dir: Path) -> Iterator[Factory]:
    """Build conversations (a fresh Agent each) and close them all at the end."""
    made: list[LocalConversation] = []

    def make(**kwargs: Any) -> LocalConversation:
        agent = Agent(llm=llm, tools=[Tool(name="terminal"), Tool(name="file_editor")])
        conv = Conversation(
            agent=agent,
            workspace=workspace,
            persistence_dir=persistence_dir,
            visualizer=None,
            **kwargs,
        )
        made.append(conv)
        return conv

    yield make
    for conv in made:
        conv.close()


def of_type(events: Sequence[Event], cls: type[T]) -> list[T]:
    return [e for e in events if isinstance(e, cls)]


def pending_ids(conv: LocalConversation) -> list[str]:
    return [a.id for a in conv.state.get_unmatched_actions(conv.state.events)]


def tool_results(request: dict[str, Any]) -> dict[str, str]:
    """tool_call_id -> the tool result text sent to the model in one request."""
    results: dict[str, str] = {}
    for message in request["messages"]:
        if message["role"] != "tool":
            continue
        content = message["content"]
        if isinstance(content, list):
            content = "".join(part.get("text", "") for part in content)
        results[message["tool_call_id"]] = content
    return results


def tool_schemas(request: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Tool name -> its parameters schema, from one request's `tools`."""
    return {t["function"]["name"]: t["function"]["parameters"] for t in request["tools"]}


# --- waiting and implicit approval ------------------------------------------------------


def test_always_confirm_records_actions_without_running_them(
    make_conversation: Factory, llm_server: ScriptedLLMServer, workspace: Path
) -> None:
    conv = make_conversation()
    conv.set_confirmation_policy(AlwaysConfirm())
    llm_server.reply_tool_call("terminal", {"command": "touch made.txt"})
    conv.send_message("make a file")
    conv.run()

    assert conv.state.execution_status is Status.WAITING_FOR_CONFIRMATION
    [action] = of_type(conv.state.events, ActionEvent)
    assert action.tool_name == "terminal"
    assert not of_type(conv.state.events, ObservationEvent)
    assert not (workspace / "made.txt").exists()
    assert pending_ids(conv) == [action.id]
    assert len(llm_server.requests) == 1


def test_pause_while_waiting_keeps_waiting_for_the_decision(
    make_conversation: Factory, llm_server: ScriptedLLMServer, workspace: Path
) -> None:
    """Waiting for confirmation is already a stop: a pause must not hide the pending action."""
    conv = make_conversation()
    conv.set_confirmation_policy(AlwaysConfirm())
    llm_server.reply_tool_call("terminal", {"command": "touch made.txt"})
    conv.send_message("make a file")
    conv.run()
    [action] = of_type(conv.state.events, ActionEvent)

    conv.pause()

    assert conv.state.execution_status is Status.WAITING_FOR_CONFIRMATION
    assert of_type(conv.state.events, PauseEvent) == []
    assert pending_ids(conv) == [action.id]
    assert not (workspace / "made.txt").exists()


def test_next_run_executes_pending_actions_then_continues(
    make_conversation: Factory, llm_server: ScriptedLLMServer, workspace: Path
) -> None:
    conv = make_conversation()
    conv.set_confirmation_policy(AlwaysConfirm())
    llm_server.reply_tool_call("terminal", {"command": "echo approved > made.txt"})
    conv.send_message("make a file")
    conv.run()
    assert conv.state.execution_status is Status.WAITING_FOR_CONFIRMATION

    llm_server.reply_text("Created it.")
    conv.run()

    assert conv.state.execution_status is Status.FINISHED
    assert (workspace / "made.txt").read_text() == "approved\n"
    [action] = of_type(conv.state.events, ActionEvent)
    [observation] = of_type(conv.state.events, ObservationEvent)
    assert observation.action_id == action.id
    assert pending_ids(conv) == []
    assert len(llm_server.requests) == 2
    assert action.tool_call_id in tool_results(llm_server.requests[1])


def test_each_new_batch_waits_again(
    make_conversation: Factory, llm_server: ScriptedLLMServer, workspace: Path
) -> None:
    conv = make_conversation()
    conv.set_confirmation_policy(AlwaysConfirm())
    llm_server.reply_tool_call("terminal", {"command": "touch one.txt"})
    llm_server.reply_tool_call("terminal", {"command": "touch two.txt"})
    conv.send_message("two files")
    conv.run()
    conv.run()

    assert conv.state.execution_status is Status.WAITING_FOR_CONFIRMATION
    assert (workspace / "one.txt").exists()
    assert not (workspace / "two.txt").exists()
    assert len(pending_ids(conv)) == 1


def test_never_confirm_runs_straight_through(
    make_conversation: Factory, llm_server: ScriptedLLMServer, workspace: Path
) -> None:
    conv = make_conversation()
    conv.set_confirmation_policy(NeverConfirm())
    llm_server.reply_tool_call("terminal", {"command": "touch made.txt"})
    llm_server.reply_text("Done.")
    conv.send_message("make a file")
    conv.run()

    assert conv.state.execution_status is Status.FINISHED
    assert (workspace / "made.txt").exists()


# --- rejecting --------------------------------------------------------------------------


def test_reject_all_pending_actions(
    make_conversation: Factory, llm_server: ScriptedLLMServer, workspace: Path
) -> None:
    conv = make_conversation()
    conv.set_confirmation_policy(AlwaysConfirm())
    llm_server.reply_tool_calls(
        [
            ("terminal", {"command": "touch a.txt"}),
            ("file_editor", {"command": "create", "path": "b.txt", "file_text": "b"}),
        ]
    )
    conv.send_message("two files")
    conv.run()
    first, second = of_type(conv.state.events, ActionEvent)

    conv.reject_pending_actions("Use a dry run first.")

    rejections = of_type(conv.state.events, UserRejectObservation)
    assert [r.action_id for r in rejections] == [first.id, second.id]
    assert [r.tool_call_id for r in rejections] == [first.tool_call_id, second.tool_call_id]
    assert all(r.rejection_reason == "Use a dry run first." for r in rejections)
    assert pending_ids(conv) == []
    assert conv.state.execution_status is not Status.WAITING_FOR_CONFIRMATION
    assert not of_type(conv.state.events, ObservationEvent)

    llm_server.reply_text("Understood.")
    conv.run()

    assert conv.state.execution_status is Status.FINISHED
    assert not (workspace / "a.txt").exists()
    assert not (workspace / "b.txt").exists()
    assert not of_type(conv.state.events, ObservationEvent)
    results = tool_results(llm_server.requests[-1])
    for action in (first, second):
        assert "Use a dry run first." in results[action.tool_call_id]
        assert "rejected" in results[action.tool_call_id]


def test_reject_uses_a_default_reason(
    make_conversation: Factory, llm_server: ScriptedLLMServer
) -> None:
    conv = make_conversation()
    conv.set_confirmation_policy(AlwaysConfirm())
    llm_server.reply_tool_call("terminal", {"command": "touch a.txt"})
    conv.send_message("go")
    conv.run()
    conv.reject_pending_actions()
    [rejection] = of_type(conv.state.events, UserRejectObservation)
    assert rejection.rejection_reason == "User rejected the action."
    assert rejection.rejection_source == "user"


def test_reject_one_of_two_pending_actions(
    make_conversation: Factory, llm_server: ScriptedLLMServer, workspace: Path
) -> None:
    conv = make_conversation()
    conv.set_confirmation_policy(AlwaysConfirm())
    llm_server.reply_tool_calls(
        [
            ("terminal", {"command": "touch first.txt"}),
            ("terminal", {"command": "touch second.txt"}),
        ]
    )
    conv.send_message("two files")
    conv.run()
    first, second = of_type(conv.state.events, ActionEvent)

    conv.reject_pending_actions("no", action_ids=[first.id])

    [rejection] = of_type(conv.state.events, UserRejectObservation)
    assert rejection.action_id == first.id
    assert rejection.rejection_reason == "no"
    assert conv.state.execution_status is Status.WAITING_FOR_CONFIRMATION
    assert pending_ids(conv) == [second.id]

    llm_server.reply_text("Made the second one.")
    conv.run()

    assert conv.state.execution_status is Status.FINISHED
    assert not (workspace / "first.txt").exists()
    assert (workspace / "second.txt").exists()
    assert [o.action_id for o in of_type(conv.state.events, ObservationEvent)] == [second.id]
    assert len(of_type(conv.state.events, UserRejectObservation)) == 1
    results = tool_results(llm_server.requests[-1])
    assert "no" in results[first.tool_call_id]
    assert second.tool_call_id in results


def test_rejecting_every_id_explicitly_ends_the_wait(
    make_conversation: Factory, llm_server: ScriptedLLMServer
) -> None:
    conv = make_conversation()
    conv.set_confirmation_policy(AlwaysConfirm())
    llm_server.reply_tool_calls(
        [("terminal", {"command": "touch a"}), ("terminal", {"command": "touch b"})]
    )
    conv.send_message("go")
    conv.run()
    ids = pending_ids(conv)
    conv.reject_pending_actions("no", action_ids=ids)
    assert pending_ids(conv) == []
    assert conv.state.execution_status is not Status.WAITING_FOR_CONFIRMATION


def test_rejecting_an_unknown_id_raises_and_records_nothing(
    make_conversation: Factory, llm_server: ScriptedLLMServer
) -> None:
    conv = make_conversation()
    conv.set_confirmation_policy(AlwaysConfirm())
    llm_server.reply_tool_call("terminal", {"command": "touch a.txt"})
    conv.send_message("go")
    conv.run()
    [action] = of_type(conv.state.events, ActionEvent)
    events_before = len(conv.state.events)

    with pytest.raises(ValueError, match="not-an-action"):
        conv.reject_pending_actions("no", action_ids=[action.id, "not-an-action"])

    assert len(conv.state.events) == events_before
    assert not of_type(conv.state.events, UserRejectObservation)
    assert conv.state.execution_status is Status.WAITING_FOR_CONFIRMATION
    assert pending_ids(conv) == [action.id]


def test_rejecting_an_already_rejected_action_raises(
    make_conversation: Factory, llm_server: ScriptedLLMServer
) -> None:
    conv = make_conversation()
    conv.set_confirmation_policy(AlwaysConfirm())
    llm_server.reply_tool_calls(
        [("terminal", {"command": "touch a"}), ("terminal", {"command": "touch b"})]
    )
    conv.send_message("go")
    conv.run()
    first, _ = of_type(conv.state.events, ActionEvent)
    conv.reject_pending_actions("no", action_ids=[first.id])
    with pytest.raises(ValueError):
        conv.reject_pending_actions("again", action_ids=[first.id])
    assert len(of_type(conv.state.events, UserRejectObservation)) == 1


# --- batches that never wait ------------------------------------------------------------


def test_finish_and_think_never_wait(
    make_conversation: Factory, llm_server: ScriptedLLMServer
) -> None:
    conv = make_conversation()
    conv.set_confirmation_policy(AlwaysConfirm())
    llm_server.reply_tool_calls(
        [("think", {"thought": "Nothing to do."}), ("finish", {"message": "All done."})]
    )
    conv.send_message("anything?")
    conv.run()

    assert conv.state.execution_status is Status.FINISHED
    think, finish = of_type(conv.state.events, ActionEvent)
    observed = [o.action_id for o in of_type(conv.state.events, ObservationEvent)]
    assert observed == [think.id, finish.id]


def test_think_alone_runs_and_the_agent_continues(
    make_conversation: Factory, llm_server: ScriptedLLMServer
) -> None:
    conv = make_conversation()
    conv.set_confirmation_policy(AlwaysConfirm())
    llm_server.reply_tool_call("think", {"thought": "Let me plan."})
    llm_server.reply_text("Planned.")
    conv.send_message("plan")
    conv.run()

    assert conv.state.execution_status is Status.FINISHED
    assert len(of_type(conv.state.events, ObservationEvent)) == 1
    assert len(llm_server.requests) == 2


def test_a_mixed_batch_waits_as_a_whole(
    make_conversation: Factory, llm_server: ScriptedLLMServer, workspace: Path
) -> None:
    conv = make_conversation()
    conv.set_confirmation_policy(AlwaysConfirm())
    llm_server.reply_tool_calls(
        [("think", {"thought": "Make it."}), ("terminal", {"command": "touch x.txt"})]
    )
    conv.send_message("go")
    conv.run()

    assert conv.state.execution_status is Status.WAITING_FOR_CONFIRMATION
    assert not of_type(conv.state.events, ObservationEvent)
    assert len(pending_ids(conv)) == 2
    assert not (workspace / "x.txt").exists()


# --- restarts ---------------------------------------------------------------------------


def test_pending_actions_survive_a_restart(
    make_conversation: Factory, llm_server: ScriptedLLMServer, workspace: Path
) -> None:
    conv = make_conversation()
    conv.set_confirmation_policy(AlwaysConfirm())
    llm_server.reply_tool_calls(
        [
            ("terminal", {"command": "touch after-restart.txt"}),
            ("file_editor", {"command": "create", "path": "f.txt", "file_text": "hi"}),
        ]
    )
    conv.send_message("go")
    conv.run()
    before = pending_ids(conv)
    assert len(before) == 2
    conv.close()

    resumed = make_conversation(conversation_id=conv.id)
    assert resumed.state.execution_status is Status.WAITING_FOR_CONFIRMATION
    assert pending_ids(resumed) == before
    assert isinstance(resumed.state.confirmation_policy, AlwaysConfirm)
    assert not of_type(resumed.state.events, AgentErrorEvent)
    assert not (workspace / "after-restart.txt").exists()

    llm_server.reply_text("Done.")
    resumed.run()

    assert resumed.state.execution_status is Status.FINISHED
    assert (workspace / "after-restart.txt").exists()
    assert (workspace / "f.txt").read_text() == "hi"
    assert sorted(o.action_id for o in of_type(resumed.state.events, ObservationEvent)) == sorted(
        before
    )


def test_partial_rejection_survives_a_restart(
    make_conversation: Factory, llm_server: ScriptedLLMServer, workspace: Path
) -> None:
    conv = make_conversation()
    conv.set_confirmation_policy(AlwaysConfirm())
    llm_server.reply_tool_calls(
        [("terminal", {"command": "touch one"}), ("terminal", {"command": "touch two"})]
    )
    conv.send_message("go")
    conv.run()
    first, second = of_type(conv.state.events, ActionEvent)
    conv.reject_pending_actions("not this one", action_ids=[first.id])
    conv.close()

    resumed = make_conversation(conversation_id=conv.id)
    assert resumed.state.execution_status is Status.WAITING_FOR_CONFIRMATION
    assert pending_ids(resumed) == [second.id]
    llm_server.reply_text("Done.")
    resumed.run()
    assert not (workspace / "one").exists()
    assert (workspace / "two").exists()


# --- risk-based confirmation ------------------------------------------------------------


def test_llm_analyzer_adds_a_required_risk_parameter_to_acting_tools(
    make_conversation: Factory, llm_server: ScriptedLLMServer
) -> None:
    conv = make_conversation()
    conv.set_confirmation_policy(ConfirmRisky())
    conv.set_security_analyzer(LLMSecurityAnalyzer())
    llm_server.reply_text("Hi.")
    conv.send_message("hello")
    conv.run()

    schemas = tool_schemas(llm_server.requests[0])
    for name in ("terminal", "file_editor"):
        risk = schemas[name]["properties"]["security_risk"]
        assert risk["enum"] == ["LOW", "MEDIUM", "HIGH"]
        assert "security_risk" in schemas[name]["required"]
    for name in ("finish", "think"):
        assert "security_risk" not in schemas[name]["properties"]
        assert "security_risk" not in schemas[name].get("required", [])


def test_no_risk_parameter_without_an_analyzer(
    make_conversation: Factory, llm_server: ScriptedLLMServer
) -> None:
    conv = make_conversation()
    conv.set_confirmation_policy(ConfirmRisky())
    llm_server.reply_text("Hi.")
    conv.send_message("hello")
    conv.run()

    schemas = tool_schemas(llm_server.requests[0])
    assert {"terminal", "file_editor", "finish", "think"} <= set(schemas)
    assert all("security_risk" not in s["properties"] for s in schemas.values())


def test_pattern_analyzer_alone_does_not_ask_the_model(
    make_conversation: Factory, llm_server: ScriptedLLMServer
) -> None:
    conv = make_conversation()
    conv.set_confirmation_policy(ConfirmRisky())
    conv.set_security_analyzer(PatternSecurityAnalyzer())
    llm_server.reply_text("Hi.")
    conv.send_message("hello")
    conv.run()
    schemas = tool_schemas(llm_server.requests[0])
    assert "security_risk" not in schemas["terminal"]["properties"]


def test_risk_parameter_follows_the_current_analyzer(
    make_conversation: Factory, llm_server: ScriptedLLMServer
) -> None:
    conv = make_conversation()
    conv.set_security_analyzer(LLMSecurityAnalyzer())
    llm_server.reply_text("One.")
    conv.send_message("one")
    conv.run()
    conv.set_security_analyzer(None)
    llm_server.reply_text("Two.")
    conv.send_message("two")
    conv.run()
    assert "security_risk" in tool_schemas(llm_server.requests[0])["terminal"]["properties"]
    assert "security_risk" not in tool_schemas(llm_server.requests[1])["terminal"]["properties"]


def test_confirm_risky_runs_low_and_waits_on_high(
    make_conversation: Factory, llm_server: ScriptedLLMServer, workspace: Path
) -> None:
    conv = make_conversation()
    conv.set_confirmation_policy(ConfirmRisky())
    conv.set_security_analyzer(LLMSecurityAnalyzer())
    llm_server.reply_tool_call("terminal", {"command": "touch low.txt", "security_risk": "LOW"})
    llm_server.reply_tool_call(
        "terminal", {"command": "touch medium.txt", "security_risk": "MEDIUM"}
    )
    llm_server.reply_tool_call("terminal", {"command": "touch high.txt", "security_risk": "HIGH"})
    conv.send_message("three files")
    conv.run()

    assert conv.state.execution_status is Status.WAITING_FOR_CONFIRMATION
    low, medium, high = of_type(conv.state.events, ActionEvent)
    assert (low.security_risk, medium.security_risk, high.security_risk) == (
        SecurityRisk.LOW,
        SecurityRisk.MEDIUM,
        SecurityRisk.HIGH,
    )
    assert high.security_risk_reason == "the model: rated HIGH"
    assert (workspace / "low.txt").exists()
    assert (workspace / "medium.txt").exists()
    assert not (workspace / "high.txt").exists()
    assert pending_ids(conv) == [high.id]
    assert "security_risk" not in high.action.model_dump()  # type: ignore[union-attr]


def test_confirm_risky_medium_threshold_is_inclusive(
    make_conversation: Factory, llm_server: ScriptedLLMServer, workspace: Path
) -> None:
    conv = make_conversation()
    conv.set_confirmation_policy(ConfirmRisky(threshold=SecurityRisk.MEDIUM))
    conv.set_security_analyzer(LLMSecurityAnalyzer())
    llm_server.reply_tool_call(
        "terminal", {"command": "touch medium.txt", "security_risk": "MEDIUM"}
    )
    conv.send_message("go")
    conv.run()
    assert conv.state.execution_status is Status.WAITING_FOR_CONFIRMATION
    assert not (workspace / "medium.txt").exists()


@pytest.mark.parametrize(("confirm_unknown", "waits"), [(True, True), (False, False)])
def test_unrated_action_follows_confirm_unknown(
    make_conversation: Factory,
    llm_server: ScriptedLLMServer,
    workspace: Path,
    confirm_unknown: bool,
    waits: bool,
) -> None:
    conv = make_conversation()
    conv.set_confirmation_policy(ConfirmRisky(confirm_unknown=confirm_unknown))
    conv.set_security_analyzer(LLMSecurityAnalyzer())
    llm_server.reply_tool_call("terminal", {"command": "touch unrated.txt"})
    llm_server.reply_text("Done.")
    conv.send_message("go")
    conv.run()

    [action] = of_type(conv.state.events, ActionEvent)
    assert action.security_risk is SecurityRisk.UNKNOWN
    assert (conv.state.execution_status is Status.WAITING_FOR_CONFIRMATION) is waits
    assert (workspace / "unrated.txt").exists() is not waits


def test_model_rating_is_ignored_without_an_analyzer(
    make_conversation: Factory, llm_server: ScriptedLLMServer, workspace: Path
) -> None:
    conv = make_conversation()
    conv.set_confirmation_policy(ConfirmRisky(threshold=SecurityRisk.LOW, confirm_unknown=False))
    llm_server.reply_tool_call("terminal", {"command": "touch rated.txt", "security_risk": "HIGH"})
    llm_server.reply_text("Done.")
    conv.send_message("go")
    conv.run()

    [action] = of_type(conv.state.events, ActionEvent)
    assert action.security_risk is SecurityRisk.UNKNOWN
    assert action.security_risk_reason is None
    assert not of_type(conv.state.events, AgentErrorEvent)
    assert conv.state.execution_status is Status.FINISHED
    assert (workspace / "rated.txt").exists()


def test_model_rating_without_an_analyzer_still_waits_if_unknown_is_confirmed(
    make_conversation: Factory, llm_server: ScriptedLLMServer, workspace: Path
) -> None:
    conv = make_conversation()
    conv.set_confirmation_policy(ConfirmRisky())
    llm_server.reply_tool_call("terminal", {"command": "touch rated.txt", "security_risk": "LOW"})
    conv.send_message("go")
    conv.run()
    assert conv.state.execution_status is Status.WAITING_FOR_CONFIRMATION
    assert not (workspace / "rated.txt").exists()


def test_unratable_think_does_not_hold_back_a_low_action(
    make_conversation: Factory, llm_server: ScriptedLLMServer, workspace: Path
) -> None:
    conv = make_conversation()
    conv.set_confirmation_policy(ConfirmRisky())
    conv.set_security_analyzer(LLMSecurityAnalyzer())
    llm_server.reply_tool_calls(
        [
            ("think", {"thought": "Make the file."}),
            ("terminal", {"command": "touch low.txt", "security_risk": "LOW"}),
        ]
    )
    llm_server.reply_text("Done.")
    conv.send_message("go")
    conv.run()

    assert conv.state.execution_status is Status.FINISHED
    assert (workspace / "low.txt").exists()
