"""Tests for stuck detection: the StuckDetector's patterns on hand-built events, and the
engine's reaction (one nudge; if the agent carries on, STUCK) with a real agent repeating
itself.

Engine tests talk to the scripted LLM server over real HTTP through litellm; its default
reply keeps making the same tool call, and the commands run in a real bash.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from llm_server import Reply, ToolCall
from pydantic import ValidationError

from ohtui.sdk import (
    LLM,
    ActionEvent,
    Agent,
    AgentErrorEvent,
    Condensation,
    Conversation,
    ConversationErrorEvent,
    ConversationExecutionStatus,
    ConversationState,
    LocalConversation,
    Message,
    MessageEvent,
    MessageToolCall,
    Observation,
    ObservationEvent,
    PauseEvent,
    StuckDetectionThresholds,
    StuckDetector,
    TextContent,
    Tool,
)
from ohtui.sdk.conversation.stuck_detector import (
    EMPTY_REPLY_SENDER,
    MAX_EVENTS_TO_SCAN_FOR_STUCK_DETECTION,
    NUDGE_SENDER,
)
from ohtui.sdk.workspace import LocalWorkspace

Status = ConversationExecutionStatus
T = TypeVar("T")
Factory = Callable[..., LocalConversation]
SAME_CALL = ToolCall("terminal", json.dumps({"command": "echo same"}))


# --- helpers -----------------------------------------------------------------------------


@pytest.fixture
def state(llm: LLM, workspace: Path) -> Iterator[ConversationState]:
    """An in-memory conversation state to append hand-built events to."""
    created = ConversationState.create(
        id=uuid.uuid4(),
        agent=Agent(llm=llm),
        workspace=LocalWorkspace(working_dir=str(workspace)),
    )
    yield created
    created.close()


@pytest.fixture
def make_conversation(llm: LLM, workspace: Path, persistence_dir: Path) -> Iterator[Factory]:
    """Build conversations (a fresh Agent each) and close them all at the end."""
    made: list[LocalConversation] = []

    def make(**kwargs: Any) -> LocalConversation:
        kwargs.setdefault("visualizer", None)
        agent = Agent(llm=llm, tools=[Tool(name="terminal"), Tool(name="file_editor")])
        conv = Conversation(
            agent=agent, workspace=workspace, persistence_dir=persistence_dir, **kwargs
        )
        made.append(conv)
        return conv

    yield make
    for conv in made:
        conv.close()


def add_step(
    state: ConversationState,
    command: str = "echo same",
    result: str = "same\n[exit code 0]",
    *,
    failed: bool = False,
    agent_error: bool = False,
    tool: str = "terminal",
) -> None:
    """Append an action and its answer (an observation, or an AgentErrorEvent)."""
    call_id = f"call_{uuid.uuid4().hex[:8]}"
    call = MessageToolCall(id=call_id, name=tool, arguments=json.dumps({"command": command}))
    action = ActionEvent(
        tool_name=tool,
        tool_call_id=call_id,
        tool_call=call,
        llm_response_id=f"resp_{uuid.uuid4().hex[:8]}",
    )
    state.append_event(action)
    if agent_error:
        state.append_event(AgentErrorEvent(error=result, tool_name=tool, tool_call_id=call_id))
    else:
        state.append_event(
            ObservationEvent(
                observation=Observation.from_text(result, is_error=failed),
                action_id=action.id,
                tool_name=tool,
                tool_call_id=call_id,
            )
        )


def user_message(text: str = "go on") -> MessageEvent:
    return MessageEvent(
        source="user", llm_message=Message(role="user", content=[TextContent(text=text)])
    )


def agent_message(text: str = "thinking aloud") -> MessageEvent:
    return MessageEvent(
        source="agent", llm_message=Message(role="assistant", content=[TextContent(text=text)])
    )


def nudge_message() -> MessageEvent:
    return MessageEvent(
        source="environment",
        sender=NUDGE_SENDER,
        llm_message=Message(role="user", content=[TextContent(text="You seem to be stuck")]),
    )


def pattern(detector: StuckDetector) -> str | None:
    report = detector.check()
    assert detector.is_stuck() is (report is not None)
    return report.pattern if report is not None else None


def of_type(events: Any, cls: type[T]) -> list[T]:
    return [e for e in events if isinstance(e, cls)]


def nudges(conv: LocalConversation) -> list[MessageEvent]:
    return [e for e in of_type(conv.state.events, MessageEvent) if e.sender == NUDGE_SENDER]


def text_of(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content)
    return content or ""


# --- thresholds --------------------------------------------------------------------------


def test_default_thresholds(state: ConversationState) -> None:
    thresholds = StuckDetectionThresholds()
    assert (
        thresholds.action_observation,
        thresholds.action_error,
        thresholds.monologue,
        thresholds.alternating_pattern,
    ) == (4, 3, 3, 6)
    detector = StuckDetector(state)
    assert detector.thresholds == thresholds
    assert detector.action_observation_threshold == 4
    assert detector.action_error_threshold == 3
    assert detector.monologue_threshold == 3
    assert detector.alternating_pattern_threshold == 6


def test_thresholds_may_be_given_as_a_mapping(state: ConversationState) -> None:
    detector = StuckDetector(state, {"action_observation": 2, "monologue": 5})
    assert detector.action_observation_threshold == 2
    assert detector.monologue_threshold == 5
    assert detector.action_error_threshold == 3  # unchanged default


@pytest.mark.parametrize(
    "thresholds",
    [{"no_such_pattern": 3}, {"action_observation": 1}, {"alternating_pattern": 3}],
)
def test_invalid_thresholds_are_rejected(state: ConversationState, thresholds) -> None:
    with pytest.raises(ValidationError):
        StuckDetector(state, thresholds)


def test_thresholds_are_frozen() -> None:
    thresholds = StuckDetectionThresholds(action_error=5)
    with pytest.raises(ValidationError):
        thresholds.action_error = 2  # type: ignore[misc]


# --- patterns on hand-built events -------------------------------------------------------


def test_empty_history_is_not_stuck(state: ConversationState) -> None:
    assert pattern(StuckDetector(state)) is None
    state.append_event(user_message())
    assert pattern(StuckDetector(state)) is None


@pytest.mark.parametrize("threshold", [None, 2, 5])
def test_repeated_action_observation_triggers_at_its_threshold(
    state: ConversationState, threshold: int | None
) -> None:
    detector = StuckDetector(
        state, {"action_observation": threshold} if threshold is not None else None
    )
    n = threshold or 4
    state.append_event(user_message())
    for _ in range(n - 1):
        add_step(state)
    assert pattern(detector) is None
    add_step(state)
    assert pattern(detector) == "action_observation"
    report = detector.check()
    assert report is not None
    assert "terminal" in report.description
    assert "echo same" in report.description
    assert f"{n} times" in report.description


def test_the_same_action_with_different_results_is_not_stuck(state: ConversationState) -> None:
    detector = StuckDetector(state)
    for i in range(6):
        add_step(state, "date", f"tick {i}")
    assert pattern(detector) is None


def test_different_actions_with_the_same_result_are_not_stuck(state: ConversationState) -> None:
    detector = StuckDetector(state)
    for i in range(6):
        add_step(state, f"echo {i} >/dev/null", "[exit code 0]")
    assert pattern(detector) is None


def test_a_different_step_breaks_the_repetition(state: ConversationState) -> None:
    detector = StuckDetector(state)
    for _ in range(3):
        add_step(state)
    add_step(state, "ls", "a.txt")
    for _ in range(3):
        add_step(state)
    assert pattern(detector) is None
    add_step(state)
    assert pattern(detector) == "action_observation"


@pytest.mark.parametrize("agent_error", [True, False], ids=["agent-error", "failed-observation"])
def test_a_repeated_action_error_is_nudged_at_its_threshold_and_stuck_one_later(
    state: ConversationState, agent_error: bool
) -> None:
    detector = StuckDetector(state)
    for _ in range(2):
        add_step(state, "false", "[exit code 1]", failed=True, agent_error=agent_error)
    assert pattern(detector) is None
    assert detector.get_action_error_nudge() is None
    add_step(state, "false", "[exit code 1]", failed=True, agent_error=agent_error)
    assert pattern(detector) is None  # not stuck yet: first the agent is told
    nudge = detector.get_action_error_nudge()
    assert nudge is not None
    assert "`terminal`" in nudge
    assert "3 times" in nudge
    assert "[exit code 1]" in nudge  # the error itself, so the model can act on it
    state.append_event(nudge_message())
    assert detector.get_action_error_nudge() is None  # told once, not again
    add_step(state, "false", "[exit code 1]", failed=True, agent_error=agent_error)
    assert pattern(detector) == "action_error"
    assert detector.get_action_error_nudge() is None
    report = detector.check()
    assert report is not None
    assert "failed" in report.description
    assert "4 times" in report.description


def test_a_long_error_is_cut_in_the_nudge(state: ConversationState) -> None:
    detector = StuckDetector(state)
    for _ in range(3):
        add_step(state, "false", "x" * 5000, failed=True)
    nudge = detector.get_action_error_nudge()
    assert nudge is not None
    assert len(nudge) < 1000


def test_custom_action_error_threshold(state: ConversationState) -> None:
    detector = StuckDetector(state, {"action_error": 5})
    for _ in range(4):
        add_step(state, "false", "boom", failed=True)
    assert detector.get_action_error_nudge() is None
    add_step(state, "false", "boom", failed=True)
    assert "5 times" in (detector.get_action_error_nudge() or "")
    add_step(state, "false", "boom", failed=True)
    assert pattern(detector) == "action_error"


def test_different_errors_are_not_stuck(state: ConversationState) -> None:
    detector = StuckDetector(state)
    for i in range(5):
        add_step(state, "false", f"error number {i}", failed=True)
    assert pattern(detector) is None


def test_monologue_triggers_at_its_threshold(state: ConversationState) -> None:
    detector = StuckDetector(state)
    state.append_event(user_message())
    state.append_event(agent_message("one"))
    state.append_event(agent_message("two"))
    assert pattern(detector) is None
    state.append_event(agent_message("three"))
    assert pattern(detector) == "monologue"
    report = detector.check()
    assert report is not None
    assert "3 messages" in report.description


def test_an_action_breaks_a_monologue(state: ConversationState) -> None:
    detector = StuckDetector(state)
    state.append_event(agent_message("one"))
    state.append_event(agent_message("two"))
    add_step(state, "ls", "a.txt")
    state.append_event(agent_message("three"))
    state.append_event(agent_message("four"))
    assert pattern(detector) is None
    state.append_event(agent_message("five"))
    assert pattern(detector) == "monologue"


def test_alternating_pattern_triggers_at_its_threshold(state: ConversationState) -> None:
    detector = StuckDetector(state)
    for i in range(5):
        if i % 2 == 0:
            add_step(state, "echo a", "a")
        else:
            add_step(state, "echo b", "b")
    assert pattern(detector) is None
    add_step(state, "echo b", "b")
    assert pattern(detector) == "alternating_pattern"
    report = detector.check()
    assert report is not None
    assert "echo a" in report.description
    assert "echo b" in report.description


def test_custom_alternating_threshold(state: ConversationState) -> None:
    detector = StuckDetector(state, {"alternating_pattern": 4})
    add_step(state, "echo a", "a")
    add_step(state, "echo b", "b")
    add_step(state, "echo a", "a")
    assert pattern(detector) is None
    add_step(state, "echo b", "b")
    assert pattern(detector) == "alternating_pattern"


def test_alternating_with_changing_results_is_not_stuck(state: ConversationState) -> None:
    detector = StuckDetector(state)
    for i in range(8):
        add_step(state, "echo a" if i % 2 == 0 else "echo b", f"result {i}")
    assert pattern(detector) is None


def test_repeated_condensation_is_a_context_window_loop(state: ConversationState) -> None:
    detector = StuckDetector(state)
    state.append_event(Condensation(summary="one"))
    state.append_event(Condensation(summary="two"))
    assert pattern(detector) is None
    state.append_event(Condensation(summary="three"))
    assert pattern(detector) == "context_window"


def test_a_user_message_resets_the_window(state: ConversationState) -> None:
    detector = StuckDetector(state)
    for _ in range(3):
        add_step(state)
    state.append_event(user_message("try harder"))
    add_step(state)
    assert pattern(detector) is None
    for _ in range(2):
        add_step(state)
    assert pattern(detector) is None
    add_step(state)
    assert pattern(detector) == "action_observation"


def test_a_user_message_resets_a_monologue(state: ConversationState) -> None:
    detector = StuckDetector(state)
    state.append_event(agent_message("one"))
    state.append_event(agent_message("two"))
    state.append_event(user_message())
    state.append_event(agent_message("three"))
    state.append_event(agent_message("four"))
    assert pattern(detector) is None


def test_a_nudge_is_remembered_until_the_user_writes(state: ConversationState) -> None:
    detector = StuckDetector(state)
    state.append_event(user_message())
    assert detector.nudged() is False
    for _ in range(4):
        add_step(state)
    assert pattern(detector) == "action_observation"
    state.append_event(nudge_message())
    assert detector.nudged() is True
    assert pattern(detector) == "action_observation"  # a nudge is not a step: it goes on
    add_step(state, "echo other", "other")
    assert pattern(detector) is None
    assert detector.nudged() is True
    state.append_event(user_message("new directions"))
    assert detector.nudged() is False
    assert pattern(detector) is None


def test_the_engines_own_messages_do_not_break_a_monologue(state: ConversationState) -> None:
    detector = StuckDetector(state)
    state.append_event(user_message())
    state.append_event(agent_message(""))
    state.append_event(MessageEvent.from_environment("say something", EMPTY_REPLY_SENDER))
    state.append_event(agent_message(""))
    state.append_event(nudge_message())
    assert pattern(detector) is None
    state.append_event(agent_message(""))
    assert pattern(detector) == "monologue"


def test_only_a_bounded_window_of_events_is_scanned(state: ConversationState) -> None:
    assert MAX_EVENTS_TO_SCAN_FOR_STUCK_DETECTION == 60
    detector = StuckDetector(state)
    for _ in range(4):
        add_step(state)  # 8 events
    fillers = MAX_EVENTS_TO_SCAN_FOR_STUCK_DETECTION - 8
    for _ in range(fillers):
        state.append_event(PauseEvent())
    assert pattern(detector) == "action_observation"  # all four steps are still in the window
    state.append_event(PauseEvent())  # the first action falls out of the window
    assert pattern(detector) is None


def test_an_old_nudge_outside_the_window_is_forgotten(state: ConversationState) -> None:
    detector = StuckDetector(state)
    state.append_event(nudge_message())
    assert detector.nudged() is True
    for _ in range(MAX_EVENTS_TO_SCAN_FOR_STUCK_DETECTION):
        state.append_event(PauseEvent())
    assert detector.nudged() is False


def test_the_detector_works_on_a_conversations_events(
    make_conversation: Factory,
) -> None:
    conv = make_conversation(stuck_detection_thresholds={"action_observation": 2})
    detector = conv.stuck_detector
    assert detector is not None
    assert detector.action_observation_threshold == 2
    conv.send_message("hello")
    add_step(conv.state)
    assert pattern(detector) is None
    add_step(conv.state)
    assert pattern(detector) == "action_observation"


# --- the engine --------------------------------------------------------------------------


def assert_stuck(conv: LocalConversation) -> ConversationErrorEvent:
    assert conv.state.execution_status is Status.STUCK
    errors = of_type(conv.state.events, ConversationErrorEvent)
    assert [e.code for e in errors] == ["AgentStuck"]
    assert "stuck" in errors[0].detail
    return errors[0]


def test_a_repeating_agent_is_nudged_once_then_stopped_as_stuck(
    make_conversation: Factory, llm_server
) -> None:
    llm_server.set_default(Reply(tool_calls=(SAME_CALL,)))
    conv = make_conversation()
    conv.send_message("Do something useful")
    conv.run()  # returns without raising

    assert len(llm_server.requests) == 5  # 4 steps, the nudge, the same step once more
    [nudge] = nudges(conv)
    assert nudge.source == "environment"
    assert "terminal" in nudge.text
    assert "echo same" in nudge.text
    assert "4 times" in nudge.text
    # The nudge came right after the fourth observation, and the model saw it.
    events = list(conv.state.events)
    index = events.index(nudge)
    assert len(of_type(events[:index], ObservationEvent)) == 4
    assert nudge.text not in json.dumps(llm_server.requests[3])
    fifth = llm_server.requests[4]["messages"][-1]
    assert fifth["role"] == "user"
    assert text_of(fifth) == nudge.text
    assert len(of_type(events, ObservationEvent)) == 5
    error = assert_stuck(conv)
    assert "echo same" in error.detail


def test_a_user_message_after_stuck_runs_again(make_conversation: Factory, llm_server) -> None:
    llm_server.set_default(Reply(tool_calls=(SAME_CALL,)))
    conv = make_conversation()
    conv.send_message("Do something useful")
    conv.run()
    assert_stuck(conv)
    requests = len(llm_server.requests)

    llm_server.reply_text("I will stop repeating myself.")
    conv.send_message("Stop that and tell me what blocks you")
    assert conv.state.execution_status is Status.IDLE
    conv.run()
    assert conv.state.execution_status is Status.FINISHED
    assert len(llm_server.requests) == requests + 1


def test_one_repetition_less_than_the_threshold_is_not_stuck(
    make_conversation: Factory, llm_server
) -> None:
    for _ in range(3):
        llm_server.reply_tool_call("terminal", {"command": "echo same"})
    llm_server.reply_text("Done.")
    conv = make_conversation()
    conv.send_message("Echo three times")
    conv.run()
    assert conv.state.execution_status is Status.FINISHED
    assert nudges(conv) == []
    assert of_type(conv.state.events, ConversationErrorEvent) == []
    assert len(llm_server.requests) == 4


def test_an_agent_that_recovers_after_the_nudge_finishes(
    make_conversation: Factory, llm_server
) -> None:
    for _ in range(4):
        llm_server.reply_tool_call("terminal", {"command": "echo same"})
    llm_server.reply_text("Sorry, I was looping. Done.")
    conv = make_conversation()
    conv.send_message("Work")
    conv.run()
    assert len(nudges(conv)) == 1
    assert conv.state.execution_status is Status.FINISHED
    assert of_type(conv.state.events, ConversationErrorEvent) == []


def test_a_user_message_resets_the_repetition_count(make_conversation: Factory, llm_server) -> None:
    conv = make_conversation()
    for round_ in range(2):
        for _ in range(3):
            llm_server.reply_tool_call("terminal", {"command": "echo same"})
        llm_server.reply_text(f"Round {round_} done.")
        conv.send_message(f"Round {round_}")
        conv.run()
        assert conv.state.execution_status is Status.FINISHED
    assert nudges(conv) == []  # six identical steps, but never four in one window


def test_stuck_detection_off_runs_until_the_iteration_limit(
    make_conversation: Factory, llm_server
) -> None:
    llm_server.set_default(Reply(tool_calls=(SAME_CALL,)))
    conv = make_conversation(stuck_detection=False, max_iteration_per_run=10)
    assert conv.stuck_detector is None
    conv.send_message("Repeat")
    conv.run()
    assert len(llm_server.requests) == 10
    assert nudges(conv) == []
    assert conv.state.execution_status is Status.ERROR
    assert [e.code for e in of_type(conv.state.events, ConversationErrorEvent)] == [
        "MaxIterationsReached"
    ]


def test_custom_thresholds_apply_in_the_engine(make_conversation: Factory, llm_server) -> None:
    llm_server.set_default(Reply(tool_calls=(SAME_CALL,)))
    conv = make_conversation(stuck_detection_thresholds={"action_observation": 2})
    conv.send_message("Repeat")
    conv.run()
    assert len(llm_server.requests) == 3
    [nudge] = nudges(conv)
    assert "2 times" in nudge.text
    assert_stuck(conv)


def test_thresholds_object_applies_in_the_engine(make_conversation: Factory, llm_server) -> None:
    llm_server.set_default(Reply(tool_calls=(SAME_CALL,)))
    conv = make_conversation(
        stuck_detection_thresholds=StuckDetectionThresholds(action_observation=3)
    )
    conv.send_message("Repeat")
    conv.run()
    assert len(llm_server.requests) == 4
    assert_stuck(conv)


def test_a_repeatedly_failing_command_is_an_action_error(
    make_conversation: Factory, llm_server
) -> None:
    llm_server.set_default(
        Reply(tool_calls=(ToolCall("terminal", json.dumps({"command": "false"})),))
    )
    conv = make_conversation()
    conv.send_message("Run false")
    conv.run()
    assert len(llm_server.requests) == 4  # 3 failures, the nudge, one more
    [nudge] = nudges(conv)
    assert "same error each time" in nudge.text
    assert "3 times" in nudge.text
    assert "[exit code 1]" in nudge.text
    observations = of_type(conv.state.events, ObservationEvent)
    assert all(o.observation.is_error for o in observations)
    assert_stuck(conv)


def test_a_repeated_invalid_call_is_an_action_error(make_conversation: Factory, llm_server) -> None:
    llm_server.set_default(
        Reply(tool_calls=(ToolCall("terminal", json.dumps({"no_such_argument": 1})),))
    )
    conv = make_conversation()
    conv.send_message("Call it wrong")
    conv.run()
    errors = of_type(conv.state.events, AgentErrorEvent)
    assert len(errors) == 4
    assert len({e.error for e in errors}) == 1
    assert of_type(conv.state.events, ObservationEvent) == []
    [nudge] = nudges(conv)
    assert errors[0].error in nudge.text
    events = list(conv.state.events)
    assert len(of_type(events[: events.index(nudge)], AgentErrorEvent)) == 3
    assert_stuck(conv)


def test_alternating_actions_are_stuck(make_conversation: Factory, llm_server) -> None:
    calls = [0]

    def alternate(body: dict[str, Any]) -> Reply:
        calls[0] += 1
        command = "echo ping" if calls[0] % 2 else "echo pong"
        return Reply(tool_calls=(ToolCall("terminal", json.dumps({"command": command})),))

    llm_server.set_default(alternate)
    conv = make_conversation()
    conv.send_message("Ping pong")
    conv.run()
    assert len(llm_server.requests) == 7  # 6 alternations, the nudge, one more
    [nudge] = nudges(conv)
    assert "alternated" in nudge.text
    assert "echo ping" in nudge.text
    assert "echo pong" in nudge.text
    assert_stuck(conv)


def test_a_stuck_conversation_is_saved_as_stuck(make_conversation: Factory, llm_server) -> None:
    llm_server.set_default(Reply(tool_calls=(SAME_CALL,)))
    conv = make_conversation(stuck_detection_thresholds={"action_observation": 2})
    conv.send_message("Repeat")
    conv.run()
    assert_stuck(conv)
    conversation_id = conv.id
    conv.close()
    resumed = make_conversation(conversation_id=conversation_id)
    assert resumed.state.execution_status is Status.STUCK
    assert len(nudges(resumed)) == 1


def test_a_reply_with_only_reasoning_is_answered_and_the_agent_goes_on(
    make_conversation: Factory, llm_server
) -> None:
    llm_server.reply_text("  ", reasoning="I should answer, but let me think first.")
    llm_server.reply_text("Here is my answer.")
    conv = make_conversation()
    conv.send_message("Answer me")
    conv.run()
    assert conv.state.execution_status is Status.FINISHED
    assert len(llm_server.requests) == 2
    [told] = [e for e in of_type(conv.state.events, MessageEvent) if e.sender == EMPTY_REPLY_SENDER]
    assert told.source == "environment"
    assert "did not include a function call or a message" in told.text
    second = llm_server.requests[1]["messages"]
    assert [m["role"] for m in second[1:]] == ["user", "user"]  # the empty reply is not sent
    assert text_of(second[-1]) == told.text


def test_an_agent_that_keeps_saying_nothing_is_stuck(
    make_conversation: Factory, llm_server
) -> None:
    llm_server.set_default(Reply(text="", reasoning="Hmm."))
    conv = make_conversation()
    conv.send_message("Answer me")
    conv.run()
    assert len(llm_server.requests) == 4  # 3 empty replies, the nudge, one more
    [nudge] = nudges(conv)
    assert "3 messages" in nudge.text
    assert_stuck(conv)


def test_stuck_detection_can_be_switched_off_on_an_open_conversation(
    make_conversation: Factory, llm_server
) -> None:
    llm_server.set_default(Reply(tool_calls=(SAME_CALL,)))
    conv = make_conversation(max_iteration_per_run=6)
    conv.state.stuck_detection = False  # saved with the conversation, and obeyed at once
    assert conv.stuck_detector is None
    conv.send_message("Repeat")
    conv.run()
    assert nudges(conv) == []
    assert conv.state.execution_status is Status.ERROR  # the iteration limit, not STUCK
    assert len(llm_server.requests) == 6
