"""Tests of the event classes: JSON round trips through the base, immutability, validation
and rendering."""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from datetime import datetime

import pytest
from pydantic import BaseModel, ValidationError
from rich.text import Text

import ohtui.sdk.event as event_module
from ohtui.sdk.event import (
    ActionEvent,
    AgentErrorEvent,
    CheckpointEvent,
    CheckpointRestoreEvent,
    Condensation,
    CondensationRequest,
    CondensationSummaryEvent,
    ConversationErrorEvent,
    ConversationStateUpdateEvent,
    Event,
    FileChangeRecord,
    HookExecutionEvent,
    InterruptEvent,
    LLMCompletionLogEvent,
    LLMConvertibleEvent,
    MessageEvent,
    ObservationEvent,
    PauseEvent,
    SystemPromptEvent,
    TokenEvent,
    UserRejectObservation,
)
from ohtui.sdk.llm import (
    ImageContent,
    Message,
    MessageToolCall,
    RedactedThinkingBlock,
    TextContent,
    ThinkingBlock,
)
from ohtui.sdk.security import SecurityRisk
from ohtui.sdk.tool import Action, ToolDefinition
from ohtui.sdk.tool.builtins import FinishAction, FinishObservation, FinishTool

FINISH_ARGS = '{"message": "All tests pass now."}'


def finish_tool_call(call_id: str = "call_finish_1") -> MessageToolCall:
    return MessageToolCall(id=call_id, name="finish", arguments=FINISH_ARGS)


def make_user_message() -> MessageEvent:
    return MessageEvent(
        source="user",
        llm_message=Message(
            role="user",
            content=[
                TextContent(text="Please fix the failing test in parser.py"),
                ImageContent(image_urls=["data:image/png;base64,iVBORw0KGgo="]),
            ],
        ),
        activated_skills=["python"],
        extended_content=[TextContent(text="<repo>ohtui</repo>")],
        sender="alice",
    )


def make_agent_message() -> MessageEvent:
    return MessageEvent(
        source="agent",
        llm_message=Message(
            role="assistant",
            content=[TextContent(text="The parser handles empty input now.")],
            reasoning_content="Checked the edge case first.",
        ),
        llm_response_id="chatcmpl-42",
    )


def make_action() -> ActionEvent:
    return ActionEvent(
        thought=[TextContent(text="Everything is done, finishing.")],
        reasoning_content="The tests are green.",
        thinking_blocks=[
            ThinkingBlock(thinking="Double-check the diff.", signature="sig-1"),
            RedactedThinkingBlock(data="opaque"),
        ],
        action=FinishAction(message="All tests pass now."),
        tool_name="finish",
        tool_call_id="call_finish_1",
        tool_call=finish_tool_call(),
        llm_response_id="chatcmpl-43",
        security_risk=SecurityRisk.LOW,
    )


def make_observation() -> ObservationEvent:
    return ObservationEvent(
        observation=FinishObservation.from_text("All tests pass now."),
        action_id="action-1",
        tool_name="finish",
        tool_call_id="call_finish_1",
    )


def make_reject() -> UserRejectObservation:
    return UserRejectObservation(
        action_id="action-1",
        tool_name="terminal",
        tool_call_id="call_rm",
        rejection_reason="Do not delete the build directory.",
    )


def make_agent_error() -> AgentErrorEvent:
    return AgentErrorEvent(
        tool_name="read_fil",
        tool_call_id="call_bad",
        error="Tool 'read_fil' not found. Available tools: finish, think",
    )


def make_system_prompt() -> SystemPromptEvent:
    return SystemPromptEvent(
        system_prompt=TextContent(text="You are a careful coding agent."),
        tools=[FinishTool().to_openai_tool()],
    )


def make_summary() -> CondensationSummaryEvent:
    return CondensationSummaryEvent(summary="The user asked to fix parser.py; tests were run.")


def make_condensation() -> Condensation:
    return Condensation(
        forgotten_event_ids={"ev-1", "ev-2", "ev-3"},
        summary="Earlier: explored the repository.",
        summary_offset=1,
        llm_response_id="chatcmpl-9",
    )


def make_condensation_request() -> CondensationRequest:
    return CondensationRequest()


def make_conversation_error() -> ConversationErrorEvent:
    return ConversationErrorEvent(code="LLMAuthenticationError", detail="The API key was rejected.")


def make_state_update() -> ConversationStateUpdateEvent:
    return ConversationStateUpdateEvent(key="execution_status", value="running")


def make_completion_log() -> LLMCompletionLogEvent:
    return LLMCompletionLogEvent(
        filename="completion-0001.json",
        log_data=json.dumps({"messages": [], "response": {"id": "chatcmpl-1"}}),
        model_name="openai/test-model",
        usage_id="agent",
    )


def make_token_event() -> TokenEvent:
    return TokenEvent(prompt_token_ids=[1, 2, 3], response_token_ids=[4, 5])


def make_pause() -> PauseEvent:
    return PauseEvent()


def make_interrupt() -> InterruptEvent:
    return InterruptEvent()


def make_hook_event() -> HookExecutionEvent:
    return HookExecutionEvent(
        hook_event_type="PreToolUse",
        hook_command="./check.sh",
        success=True,
        tool_name="terminal",
        exit_code=2,
        blocked=True,
        reason="no network in CI",
    )


def make_checkpoint() -> CheckpointEvent:
    return CheckpointEvent(
        checkpoint_id="0123456789abcdef" * 2 + "01234567", action_id="a1", label="rm -f src/*"
    )


def make_restore() -> CheckpointRestoreEvent:
    return CheckpointRestoreEvent(
        checkpoint_id="0123456789abcdef" * 2 + "01234567",
        label="rm -f src/*",
        undo_checkpoint_id="76543210fedcba98" * 2 + "76543210",
        changes=[FileChangeRecord(path="src/app.py", status="added")],
    )


# (factory, a text the rendering must contain)
EVENT_CASES: dict[type[Event], tuple[Callable[[], Event], str]] = {
    MessageEvent: (make_user_message, "Please fix the failing test in parser.py"),
    ActionEvent: (make_action, "finish"),
    ObservationEvent: (make_observation, "All tests pass now."),
    UserRejectObservation: (make_reject, "Do not delete the build directory."),
    AgentErrorEvent: (make_agent_error, "Tool 'read_fil' not found"),
    SystemPromptEvent: (make_system_prompt, "finish"),
    CondensationSummaryEvent: (make_summary, "fix parser.py"),
    Condensation: (make_condensation, "3 events forgotten"),
    CondensationRequest: (make_condensation_request, "Condensation Requested"),
    ConversationErrorEvent: (make_conversation_error, "The API key was rejected."),
    ConversationStateUpdateEvent: (make_state_update, "execution_status"),
    LLMCompletionLogEvent: (make_completion_log, "completion-0001.json"),
    TokenEvent: (make_token_event, "3 prompt"),
    PauseEvent: (make_pause, "Paused"),
    InterruptEvent: (make_interrupt, "Interrupted"),
    HookExecutionEvent: (make_hook_event, "no network in CI"),
    CheckpointEvent: (make_checkpoint, "rm -f src/*"),
    CheckpointRestoreEvent: (make_restore, "1 file changed"),
}

ALL_FACTORIES = [factory for factory, _ in EVENT_CASES.values()] + [make_agent_message]
FACTORY_IDS = [cls.__name__ for cls in EVENT_CASES] + ["MessageEvent-agent"]


def exported_concrete_event_classes() -> set[type[Event]]:
    return {
        obj
        for name in event_module.__all__
        if inspect.isclass(obj := getattr(event_module, name))
        and issubclass(obj, Event)
        and not inspect.isabstract(obj)
        and obj not in (Event,)
    }


def test_every_exported_concrete_event_class_is_covered() -> None:
    assert exported_concrete_event_classes() == set(EVENT_CASES)


def test_abstract_bases_cannot_be_instantiated() -> None:
    with pytest.raises(TypeError):
        LLMConvertibleEvent(source="agent")  # type: ignore[abstract]
    with pytest.raises(TypeError):
        event_module.ObservationBaseEvent(  # type: ignore[abstract]
            tool_name="x", tool_call_id="y"
        )


# ------------------------------------------------------------------ round trips


@pytest.mark.parametrize("factory", ALL_FACTORIES, ids=FACTORY_IDS)
def test_json_round_trip_through_base_restores_the_concrete_class(
    factory: Callable[[], Event],
) -> None:
    event = factory()
    dumped = event.model_dump_json()
    assert json.loads(dumped)["kind"] == type(event).__name__
    restored = Event.model_validate_json(dumped)
    assert type(restored) is type(event)
    assert restored == event
    assert restored.id == event.id
    assert restored.timestamp == event.timestamp
    # and through a python dict too, the way event stores read them back
    again = Event.model_validate(json.loads(dumped))
    assert type(again) is type(event)
    assert again == event


@pytest.mark.parametrize("factory", ALL_FACTORIES, ids=FACTORY_IDS)
def test_round_trip_through_llm_convertible_base(factory: Callable[[], Event]) -> None:
    event = factory()
    if isinstance(event, LLMConvertibleEvent):
        restored = LLMConvertibleEvent.model_validate_json(event.model_dump_json())
        assert type(restored) is type(event)
        assert restored == event
    else:
        with pytest.raises(ValidationError, match=type(event).__name__):
            LLMConvertibleEvent.model_validate_json(event.model_dump_json())


def test_action_event_round_trip_keeps_the_concrete_action_and_its_fields() -> None:
    event = make_action()
    data = json.loads(event.model_dump_json())
    assert data["action"] == {"message": "All tests pass now.", "kind": "FinishAction"}
    restored = Event.model_validate_json(event.model_dump_json())
    assert isinstance(restored, ActionEvent)
    assert isinstance(restored.action, FinishAction)
    assert restored.action.message == "All tests pass now."
    assert restored.security_risk is SecurityRisk.LOW
    assert restored.thinking_blocks == event.thinking_blocks
    assert isinstance(restored.thinking_blocks[1], RedactedThinkingBlock)
    assert restored.tool_call.arguments == FINISH_ARGS


def test_action_event_without_action_round_trips() -> None:
    event = ActionEvent(
        tool_name="finish",
        tool_call_id="call_x",
        tool_call=MessageToolCall(id="call_x", name="finish", arguments='{"msg": 1'),
        llm_response_id="resp-x",
    )
    restored = Event.model_validate_json(event.model_dump_json())
    assert isinstance(restored, ActionEvent)
    assert restored.action is None
    assert restored.security_risk is SecurityRisk.UNKNOWN


def test_observation_event_round_trip_keeps_the_concrete_observation() -> None:
    event = ObservationEvent(
        observation=FinishObservation.from_text("boom", is_error=True),
        action_id="action-1",
        tool_name="finish",
        tool_call_id="call_1",
    )
    data = json.loads(event.model_dump_json())
    assert data["observation"]["kind"] == "FinishObservation"
    restored = Event.model_validate_json(event.model_dump_json())
    assert isinstance(restored, ObservationEvent)
    assert type(restored.observation) is FinishObservation
    assert restored.observation.is_error is True
    assert restored.observation.text == "boom"


def test_message_event_round_trip_keeps_images_and_extras() -> None:
    event = make_user_message()
    restored = Event.model_validate_json(event.model_dump_json())
    assert isinstance(restored, MessageEvent)
    assert restored.llm_message.contains_image
    assert isinstance(restored.llm_message.content[1], ImageContent)
    assert restored.extended_content == [TextContent(text="<repo>ohtui</repo>")]
    assert restored.sender == "alice"
    assert restored.activated_skills == ["python"]


def test_validating_through_a_subclass_rejects_another_kind() -> None:
    pause_json = make_pause().model_dump_json()
    with pytest.raises(ValidationError, match="PauseEvent"):
        MessageEvent.model_validate_json(pause_json)


def test_state_update_dumps_pydantic_values_to_json_data() -> None:
    class _EventsTestPayload(BaseModel):
        status: str
        count: int

    event = ConversationStateUpdateEvent(
        key="stats", value=_EventsTestPayload(status="idle", count=2)
    )
    assert event.value == {"status": "idle", "count": 2}
    restored = Event.model_validate_json(event.model_dump_json())
    assert restored == event


def test_state_update_needs_a_key() -> None:
    with pytest.raises(ValidationError, match="key"):
        ConversationStateUpdateEvent(key="", value=1)


# ------------------------------------------------------------------ validation


@pytest.mark.parametrize("factory", ALL_FACTORIES, ids=FACTORY_IDS)
def test_events_are_frozen(factory: Callable[[], Event]) -> None:
    event = factory()
    with pytest.raises(ValidationError, match="frozen"):
        event.source = "user"  # type: ignore[misc]
    with pytest.raises(ValidationError, match="frozen"):
        event.id = "another-id"  # type: ignore[misc]


@pytest.mark.parametrize("factory", ALL_FACTORIES, ids=FACTORY_IDS)
def test_unknown_fields_are_rejected(factory: Callable[[], Event]) -> None:
    data = json.loads(factory().model_dump_json())
    data["unexpected_field"] = 1
    with pytest.raises(ValidationError, match="unexpected_field"):
        Event.model_validate_json(json.dumps(data))


def test_unknown_fields_in_a_nested_action_are_rejected() -> None:
    data = json.loads(make_action().model_dump_json())
    data["action"]["surprise"] = True
    with pytest.raises(ValidationError, match="surprise"):
        Event.model_validate_json(json.dumps(data))


def test_unknown_fields_are_rejected_at_construction() -> None:
    with pytest.raises(ValidationError, match="colour"):
        PauseEvent(colour="red")  # type: ignore[call-arg]


def test_unknown_kind_is_rejected_and_named() -> None:
    data = {"kind": "TeleportEvent", "source": "agent"}
    with pytest.raises(ValidationError, match="TeleportEvent"):
        Event.model_validate_json(json.dumps(data))


def test_kind_of_a_non_event_class_is_rejected() -> None:
    data = {"kind": "FinishAction", "message": "hi"}
    with pytest.raises(ValidationError, match="FinishAction"):
        Event.model_validate(data)


def test_unknown_nested_action_kind_is_rejected() -> None:
    data = json.loads(make_action().model_dump_json())
    data["action"]["kind"] = "LaunchMissilesAction"
    with pytest.raises(ValidationError, match="LaunchMissilesAction"):
        Event.model_validate_json(json.dumps(data))


def test_ids_are_unique_and_timestamps_iso() -> None:
    events = [factory() for factory in ALL_FACTORIES for _ in range(3)]
    ids = [e.id for e in events]
    assert len(set(ids)) == len(ids)
    for event in events:
        parsed = datetime.fromisoformat(event.timestamp)
        assert parsed.tzinfo is not None
        assert abs((datetime.now(parsed.tzinfo) - parsed).total_seconds()) < 60


@pytest.mark.parametrize("source", ["robot", "", "USER", "system"])
def test_source_is_restricted(source: str) -> None:
    with pytest.raises(ValidationError, match="source"):
        PauseEvent(source=source)  # type: ignore[arg-type]
    data = json.loads(make_agent_error().model_dump_json())
    data["source"] = source
    with pytest.raises(ValidationError, match="source"):
        Event.model_validate_json(json.dumps(data))


@pytest.mark.parametrize("source", ["agent", "user", "environment"])
def test_each_allowed_source_is_accepted(source: str) -> None:
    event = ConversationErrorEvent(source=source, code="X", detail="d")  # type: ignore[arg-type]
    assert Event.model_validate_json(event.model_dump_json()).source == source


def test_default_sources() -> None:
    assert make_action().source == "agent"
    assert make_observation().source == "environment"
    assert make_agent_error().source == "agent"
    assert make_pause().source == "user"
    assert make_system_prompt().source == "agent"
    assert make_conversation_error().source == "environment"


def test_message_event_requires_a_source() -> None:
    with pytest.raises(ValidationError, match="source"):
        MessageEvent(llm_message=Message(role="user", content=[TextContent(text="hi")]))  # type: ignore[call-arg]


# ------------------------------------------------------------------ rendering


@pytest.mark.parametrize("cls", list(EVENT_CASES), ids=lambda c: c.__name__)
def test_visualize_returns_meaningful_rich_text(cls: type[Event]) -> None:
    factory, expected = EVENT_CASES[cls]
    rendered = factory().visualize
    assert isinstance(rendered, Text)
    assert expected in rendered.plain


def styles_of(text: Text) -> str:
    return " ".join([str(text.style), *(str(span.style) for span in text.spans)])


@pytest.mark.parametrize("factory", [make_agent_error, make_conversation_error])
def test_errors_are_rendered_in_red(factory: Callable[[], Event]) -> None:
    rendered = factory().visualize
    assert "red" in styles_of(rendered)
    assert "red" not in styles_of(make_user_message().visualize)


def test_agent_error_rendering_names_tool_and_error() -> None:
    plain = make_agent_error().visualize.plain
    assert "read_fil" in plain
    assert "Available tools: finish, think" in plain


def test_conversation_error_rendering_has_code_and_detail() -> None:
    plain = make_conversation_error().visualize.plain
    assert "LLMAuthenticationError" in plain
    assert "The API key was rejected." in plain


def test_action_rendering_shows_thought_reasoning_tool_risk_and_action() -> None:
    plain = make_action().visualize.plain
    assert "Everything is done, finishing." in plain
    assert "The tests are green." in plain
    assert "finish" in plain
    assert "LOW" in plain
    assert "All tests pass now." in plain


def test_action_rendering_without_action_shows_raw_arguments() -> None:
    event = ActionEvent(
        tool_name="finish",
        tool_call_id="call_x",
        tool_call=MessageToolCall(id="call_x", name="finish", arguments='{"msg": 1'),
        llm_response_id="resp-x",
    )
    plain = event.visualize.plain
    assert '{"msg": 1' in plain
    assert "UNKNOWN" not in plain


def test_message_rendering_shows_reasoning_and_image_marker() -> None:
    assert "Checked the edge case first." in make_agent_message().visualize.plain
    assert "Please fix the failing test in parser.py [image]" in make_user_message().visualize.plain
    two = Message(role="user", content=[ImageContent(image_urls=["https://a", "https://b"])])
    assert "[2 images]" in MessageEvent(source="user", llm_message=two).visualize.plain


def test_error_observation_rendering_is_red() -> None:
    event = ObservationEvent(
        observation=FinishObservation.from_text("it broke", is_error=True),
        action_id="a",
        tool_name="finish",
        tool_call_id="c",
    )
    rendered = event.visualize
    assert "it broke" in rendered.plain
    assert "red" in styles_of(rendered)


def test_system_prompt_rendering_shows_the_prompt_and_each_tool() -> None:
    event = SystemPromptEvent(
        system_prompt=TextContent(text="You are careful."),
        tools=[FinishTool(), {"type": "function", "function": {"name": "terminal"}}],
    )
    assert event.tool_names == ["finish", "terminal"]
    plain = event.visualize.plain
    assert plain.startswith("System Prompt:\nYou are careful.")
    assert "Tools Available: 2" in plain
    assert "- finish: Signals that the task is done" in plain
    assert "- terminal:" in plain
    parameters = [line for line in plain.splitlines() if "Parameters: " in line]
    assert len(parameters) == 2
    assert all(len(line.split("Parameters: ", 1)[1]) <= 200 for line in parameters)
    assert '"properties"' in parameters[0]


def test_system_prompt_tools_are_tool_definitions_saved_as_what_the_model_saw() -> None:
    finish = FinishTool()
    event = SystemPromptEvent(system_prompt=TextContent(text="sys"), tools=[finish])
    assert event.tools[0] is finish
    data = json.loads(event.model_dump_json())
    assert data["tools"] == [finish.to_openai_tool()]

    restored = Event.model_validate(data)
    assert isinstance(restored, SystemPromptEvent)
    [tool] = restored.tools
    assert isinstance(tool, ToolDefinition)
    assert (tool.name, tool.description) == (finish.name, finish.description)
    assert tool.to_openai_tool() == finish.to_openai_tool()
    assert Event.model_validate(data) == restored
    with pytest.raises(NotImplementedError, match="finish"):
        tool(FinishAction(message="x"))  # a tool read back from a history cannot run


def test_str_names_class_and_source() -> None:
    text = str(make_pause())
    assert text.startswith("PauseEvent (user)")
    assert "Paused" in text


def test_condensation_helpers() -> None:
    assert make_condensation().forgotten_event_count == 3
    assert make_condensation_request().action == "condensation_request"


def test_condensation_forgets_a_set_of_ids_and_reads_the_list_form() -> None:
    event = Condensation(forgotten_event_ids={"a", "b"}, llm_response_id="r")
    data = json.loads(event.model_dump_json())
    assert sorted(data["forgotten_event_ids"]) == ["a", "b"]
    data["forgotten_event_ids"] = ["a", "b", "a"]  # how older versions saved it
    restored = Event.model_validate(data)
    assert isinstance(restored, Condensation)
    assert restored.forgotten_event_ids == {"a", "b"}


def test_rejection_says_who_rejected() -> None:
    by_user = make_reject()
    assert by_user.rejection_source == "user"
    by_hook = by_user.model_copy(update={"rejection_source": "hook"})
    restored = Event.model_validate(json.loads(by_hook.model_dump_json()))
    assert isinstance(restored, UserRejectObservation)
    assert restored.rejection_source == "hook"
    with pytest.raises(ValidationError):
        UserRejectObservation(
            action_id="a", tool_name="t", tool_call_id="c", rejection_source="model"
        )


def test_the_model_reads_a_rejection_with_its_reason() -> None:
    message = make_reject().to_llm_message()
    assert message.role == "tool"
    assert message.text.startswith("Action rejected: Do not delete the build directory.")
    assert "did not run" in message.text


@pytest.mark.parametrize(
    ("factory", "labels"),
    [
        (make_action, ["Reasoning: The tests are green.", "Thought: Everything is done"]),
        (make_observation, ["Tool: finish", "Result:", "All tests pass now."]),
        (make_agent_error, ["Error Details: Tool 'read_fil' not found", "Tool: read_fil"]),
        (make_conversation_error, ["Conversation Error [LLMAuthenticationError]"]),
        (make_pause, ["Conversation Paused"]),
    ],
    ids=["action", "observation", "agent-error", "error", "pause"],
)
def test_renderings_carry_the_sdks_labels(factory: Callable[[], Event], labels: list[str]) -> None:
    plain = factory().visualize.plain
    for label in labels:
        assert label in plain


def test_a_message_shows_its_skills_and_what_the_agent_context_added() -> None:
    event = make_user_message().model_copy(
        update={
            "activated_skills": ["pytest", "git"],
            "extended_content": [TextContent(text="Always cite sources.")],
        }
    )
    plain = event.visualize.plain
    assert "Activated Skills: pytest, git" in plain
    assert "Prompt Extension based on Agent Context:" in plain
    assert "Always cite sources." in plain
    bare = make_user_message().model_copy(update={"activated_skills": [], "extended_content": []})
    assert "Activated Skills" not in bare.visualize.plain
    assert "Prompt Extension" not in bare.visualize.plain


class _UnlistedEvent(Event):
    """An event class no renderer knows."""

    source: str = "environment"  # type: ignore[assignment]
    payload: int = 7


def test_an_unknown_event_is_named_as_such() -> None:
    plain = _UnlistedEvent().visualize.plain
    assert plain.startswith("Unknown event type: _UnlistedEvent")
    assert "payload: 7" in plain


class _PlainAction(Action):
    """An action that leaves its rendering to the base class."""

    path: str
    lines: int = 3


def test_an_action_is_shown_with_its_class_and_arguments() -> None:
    plain = _PlainAction(path="src/app.py").visualize.plain
    assert plain.splitlines()[0] == "_PlainAction"
    assert "path: src/app.py" in plain
    assert "lines: 3" in plain


def test_a_tool_dumped_by_the_sdk_is_read_by_name_and_description() -> None:
    data = json.loads(make_system_prompt().model_dump_json())
    data["tools"] = [{"kind": "TerminalTool", "name": "terminal", "description": "Run bash."}]
    restored = Event.model_validate(data)
    assert isinstance(restored, SystemPromptEvent)
    assert [(t.name, t.description) for t in restored.tools] == [("terminal", "Run bash.")]
