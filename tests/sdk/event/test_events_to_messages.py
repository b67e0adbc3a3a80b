"""Tests of LLMConvertibleEvent.events_to_messages and Message.to_chat_dict."""

from __future__ import annotations

import json

import pytest
from llm_server import ScriptedLLMServer

from ohtui.sdk import LLM
from ohtui.sdk.event import (
    ActionEvent,
    AgentErrorEvent,
    Condensation,
    CondensationRequest,
    CondensationSummaryEvent,
    ConversationErrorEvent,
    ConversationStateUpdateEvent,
    Event,
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
    TextContent,
    ThinkingBlock,
)
from ohtui.sdk.tool.builtins import (
    FinishAction,
    FinishObservation,
    FinishTool,
    ThinkAction,
    ThinkObservation,
)

to_messages = LLMConvertibleEvent.events_to_messages


def user(text: str) -> MessageEvent:
    return MessageEvent(
        source="user", llm_message=Message(role="user", content=[TextContent(text=text)])
    )


def agent(text: str) -> MessageEvent:
    return MessageEvent(
        source="agent", llm_message=Message(role="assistant", content=[TextContent(text=text)])
    )


def think_action(
    call_id: str,
    response_id: str,
    thought: str = "",
    reasoning: str | None = None,
    blocks: list[ThinkingBlock] | None = None,
) -> ActionEvent:
    arguments = json.dumps({"thought": f"thinking {call_id}"})
    return ActionEvent(
        thought=[TextContent(text=thought)] if thought else [],
        reasoning_content=reasoning,
        thinking_blocks=list(blocks or []),
        action=ThinkAction(thought=f"thinking {call_id}"),
        tool_name="think",
        tool_call_id=call_id,
        tool_call=MessageToolCall(id=call_id, name="think", arguments=arguments),
        llm_response_id=response_id,
    )


def think_observation(
    call_id: str, text: str = "Your thought has been logged."
) -> ObservationEvent:
    return ObservationEvent(
        observation=ThinkObservation.from_text(text),
        action_id=f"action-{call_id}",
        tool_name="think",
        tool_call_id=call_id,
    )


def system() -> SystemPromptEvent:
    return SystemPromptEvent(
        system_prompt=TextContent(text="You are a coding agent."),
        tools=[FinishTool().to_openai_tool()],
    )


# ------------------------------------------------------------------ roles


def test_user_and_agent_messages_become_user_and_assistant() -> None:
    messages = to_messages([user("Fix the bug"), agent("Fixed it.")])
    assert [m.role for m in messages] == ["user", "assistant"]
    assert messages[0].text == "Fix the bug"
    assert messages[1].text == "Fixed it."


def test_system_prompt_becomes_a_system_message() -> None:
    [message] = to_messages([system()])
    assert message.role == "system"
    assert message.text == "You are a coding agent."
    assert message.to_chat_dict() == {"role": "system", "content": "You are a coding agent."}


def test_condensation_summary_becomes_a_user_message() -> None:
    [message] = to_messages([CondensationSummaryEvent(summary="Earlier we ran the tests.")])
    assert message.role == "user"
    assert message.text == "Earlier we ran the tests."


def test_extended_content_is_appended_for_the_model() -> None:
    event = MessageEvent(
        source="user",
        llm_message=Message(role="user", content=[TextContent(text="Hello")]),
        extended_content=[TextContent(text=" <context>skills</context>")],
    )
    [message] = to_messages([event])
    assert message.text == "Hello <context>skills</context>"
    assert event.llm_message.text == "Hello"  # the event itself is unchanged


# ------------------------------------------------------------------ batches


def test_actions_sharing_a_response_become_one_assistant_message() -> None:
    first = think_action(
        "call_a",
        "resp-1",
        thought="Let me think twice.",
        reasoning="reasoning of the response",
        blocks=[ThinkingBlock(thinking="deep", signature="sig")],
    )
    second = think_action("call_b", "resp-1")
    third = think_action("call_c", "resp-1")
    messages = to_messages([user("go"), first, second, third])
    assert len(messages) == 2
    assistant = messages[1]
    assert assistant.role == "assistant"
    assert assistant.tool_calls is not None
    assert [tc.id for tc in assistant.tool_calls] == ["call_a", "call_b", "call_c"]
    assert assistant.tool_calls == [first.tool_call, second.tool_call, third.tool_call]
    assert assistant.text == "Let me think twice."
    assert assistant.reasoning_content == "reasoning of the response"
    assert assistant.thinking_blocks == [ThinkingBlock(thinking="deep", signature="sig")]


def test_reasoning_of_later_actions_in_a_batch_is_ignored() -> None:
    first = think_action("call_a", "resp-1", thought="First thought.", reasoning="r1")
    second = think_action("call_b", "resp-1", reasoning="r2")
    [message] = to_messages([first, second])
    assert message.text == "First thought."
    assert message.reasoning_content == "r1"


def test_a_thought_on_a_later_action_of_a_batch_is_a_corrupt_history() -> None:
    """Only the first call of a response carries its text: a second thought would be lost."""
    first = think_action("call_a", "resp-1", thought="First thought.")
    second = think_action("call_b", "resp-1", thought="Second thought.")
    with pytest.raises(AssertionError, match=r"call_b of response resp-1"):
        to_messages([first, second])


# ------------------------------------------------------------------ merged user turns


def test_consecutive_user_messages_become_one_user_turn() -> None:
    image = ImageContent(image_urls=["https://example.com/a.png"])
    events: list[Event] = [
        user("Fix the bug"),
        MessageEvent(source="user", llm_message=Message(role="user", content=[image])),
        CondensationSummaryEvent(summary="Earlier: tests ran."),
        user("then finish"),
        agent("On it."),
        user("thanks"),
    ]
    messages = to_messages(events)
    assert [m.role for m in messages] == ["user", "assistant", "user"]
    assert list(messages[0].content) == [
        TextContent(text="Fix the bug"),
        image,
        TextContent(text="Earlier: tests ran."),
        TextContent(text="then finish"),
    ]
    assert [e.llm_message.text for e in events[:1] if isinstance(e, MessageEvent)] == [
        "Fix the bug"
    ]  # the events themselves are unchanged


def test_user_messages_with_tool_metadata_are_never_merged() -> None:
    tool_result = MessageEvent(
        source="user",
        llm_message=Message(
            role="user", content=[TextContent(text="result")], tool_call_id="call_1"
        ),
    )
    named = MessageEvent(
        source="user",
        llm_message=Message(role="user", content=[TextContent(text="named")], name="bob"),
    )
    messages = to_messages([user("a"), tool_result, user("b"), named, user("c")])
    assert [m.text for m in messages] == ["a", "result", "b", "named", "c"]


def test_system_prompt_with_dynamic_context_is_two_blocks_of_one_message() -> None:
    event = SystemPromptEvent(
        system_prompt=TextContent(text="You are a coding agent."),
        tools=[],
        dynamic_context=TextContent(text="Working directory: /work"),
    )
    [message] = to_messages([event])
    assert message.role == "system"
    assert list(message.content) == [
        TextContent(text="You are a coding agent."),
        TextContent(text="Working directory: /work"),
    ]
    assert "Working directory: /work" in event.visualize.plain


def test_actions_of_different_responses_stay_separate() -> None:
    events: list[Event] = [
        think_action("call_a", "resp-1", thought="one"),
        think_observation("call_a"),
        think_action("call_b", "resp-2", thought="two"),
        think_observation("call_b"),
    ]
    messages = to_messages(events)
    assert [m.role for m in messages] == ["assistant", "tool", "assistant", "tool"]
    assert [tc.id for tc in messages[0].tool_calls or []] == ["call_a"]
    assert [tc.id for tc in messages[2].tool_calls or []] == ["call_b"]
    assert messages[0].text == "one"
    assert messages[2].text == "two"
    assert [m.tool_call_id for m in messages[1::2]] == ["call_a", "call_b"]


def test_batch_is_emitted_before_its_observations_even_when_interleaved() -> None:
    events: list[Event] = [
        think_action("call_a", "resp-1", thought="both"),
        think_observation("call_a", "first result"),
        think_action("call_b", "resp-1"),
        think_observation("call_b", "second result"),
    ]
    messages = to_messages(events)
    assert [m.role for m in messages] == ["assistant", "tool", "tool"]
    assert [tc.id for tc in messages[0].tool_calls or []] == ["call_a", "call_b"]
    assert [(m.tool_call_id, m.text) for m in messages[1:]] == [
        ("call_a", "first result"),
        ("call_b", "second result"),
    ]


def test_single_action_to_llm_message() -> None:
    action = think_action("call_a", "resp-1", thought="solo")
    message = action.to_llm_message()
    assert message.role == "assistant"
    assert message.tool_calls == [action.tool_call]
    assert message.text == "solo"


# ------------------------------------------------------------------ tool results


def test_observation_becomes_a_tool_message() -> None:
    event = ObservationEvent(
        observation=FinishObservation.from_text("Done: 3 files changed."),
        action_id="action-1",
        tool_name="finish",
        tool_call_id="call_fin",
    )
    [message] = to_messages([event])
    assert message.role == "tool"
    assert message.tool_call_id == "call_fin"
    assert message.name == "finish"
    assert message.text == "Done: 3 files changed."
    assert message.to_chat_dict() == {
        "role": "tool",
        "content": "Done: 3 files changed.",
        "tool_call_id": "call_fin",
        "name": "finish",
    }


def test_error_observation_is_marked_as_an_error_for_the_model() -> None:
    event = ObservationEvent(
        observation=FinishObservation.from_text("disk full", is_error=True),
        action_id="action-1",
        tool_name="finish",
        tool_call_id="call_fin",
    )
    [message] = to_messages([event])
    assert message.text.startswith("[The tool reported an error]")
    assert message.text.endswith("disk full")


def test_user_rejection_becomes_a_tool_message_with_the_reason() -> None:
    event = UserRejectObservation(
        action_id="action-9",
        tool_name="terminal",
        tool_call_id="call_rm",
        rejection_reason="Never run rm -rf here.",
    )
    [message] = to_messages([event])
    assert message.role == "tool"
    assert message.tool_call_id == "call_rm"
    assert message.name == "terminal"
    assert "Never run rm -rf here." in message.text
    assert "rejected" in message.text.lower()


def test_agent_error_becomes_a_tool_message_with_the_error() -> None:
    event = AgentErrorEvent(
        tool_name="finsh", tool_call_id="call_typo", error="Tool 'finsh' does not exist."
    )
    [message] = to_messages([event])
    assert message.role == "tool"
    assert message.tool_call_id == "call_typo"
    assert message.text == "Tool 'finsh' does not exist."


# ------------------------------------------------------------------ skipped events


def test_non_convertible_events_are_skipped() -> None:
    events: list[Event] = [
        system(),
        user("hello"),
        PauseEvent(),
        ConversationErrorEvent(code="E", detail="boom"),
        Condensation(forgotten_event_ids=["x"]),
        CondensationRequest(),
        ConversationStateUpdateEvent(key="execution_status", value="paused"),
        LLMCompletionLogEvent(filename="f.json", log_data="{}"),
        TokenEvent(prompt_token_ids=[1]),
        agent("hi"),
    ]
    messages = to_messages(events)
    assert [m.role for m in messages] == ["system", "user", "assistant"]
    assert [m.text for m in messages] == ["You are a coding agent.", "hello", "hi"]


def test_empty_history_gives_no_messages() -> None:
    assert to_messages([]) == []
    assert to_messages([PauseEvent()]) == []


def test_accepts_any_iterable() -> None:
    messages = to_messages(e for e in [user("a"), agent("b")])
    assert [m.text for m in messages] == ["a", "b"]


# ------------------------------------------------------------------ chat dicts


def test_text_only_message_has_string_content() -> None:
    message = Message(role="user", content=[TextContent(text="Hello "), TextContent(text="there")])
    assert message.to_chat_dict() == {"role": "user", "content": "Hello there"}


def test_message_with_images_has_a_parts_list() -> None:
    message = Message(
        role="user",
        content=[
            TextContent(text="What is in these?"),
            ImageContent(image_urls=["https://example.com/a.png", "data:image/png;base64,AAAA"]),
        ],
    )
    assert message.to_chat_dict() == {
        "role": "user",
        "content": [
            {"type": "text", "text": "What is in these?"},
            {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
        ],
    }


def test_tool_only_assistant_message_has_null_content_and_tool_calls() -> None:
    call = MessageToolCall(id="call_1", name="think", arguments='{"thought": "x"}')
    message = Message(role="assistant", tool_calls=[call])
    assert message.to_chat_dict() == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "think", "arguments": '{"thought": "x"}'},
            }
        ],
    }


def test_assistant_message_with_text_and_tool_calls_keeps_both() -> None:
    call = MessageToolCall(id="call_1", name="think", arguments="{}")
    chat = Message(
        role="assistant", content=[TextContent(text="Thinking first.")], tool_calls=[call]
    ).to_chat_dict()
    assert chat["content"] == "Thinking first."
    assert [tc["id"] for tc in chat["tool_calls"]] == ["call_1"]


def test_empty_assistant_message_has_empty_string_content() -> None:
    assert Message(role="assistant").to_chat_dict() == {"role": "assistant", "content": ""}


def test_assistant_thinking_blocks_are_passed_back() -> None:
    chat = Message(
        role="assistant",
        content=[TextContent(text="ok")],
        thinking_blocks=[ThinkingBlock(thinking="hmm", signature="s1")],
    ).to_chat_dict()
    assert chat["thinking_blocks"] == [{"type": "thinking", "thinking": "hmm", "signature": "s1"}]


def test_batched_history_round_trips_to_chat_dicts() -> None:
    events: list[Event] = [
        system(),
        user("Think twice then finish."),
        think_action("call_a", "resp-1", thought="Two thoughts."),
        think_action("call_b", "resp-1"),
        think_observation("call_a"),
        think_observation("call_b"),
    ]
    chats = [m.to_chat_dict() for m in to_messages(events)]
    assert [c["role"] for c in chats] == ["system", "user", "assistant", "tool", "tool"]
    assert chats[2]["content"] == "Two thoughts."
    assert [tc["id"] for tc in chats[2]["tool_calls"]] == ["call_a", "call_b"]
    assert [c["tool_call_id"] for c in chats[3:]] == ["call_a", "call_b"]


def test_converted_history_is_sent_to_the_model_as_is(
    llm: LLM, llm_server: ScriptedLLMServer
) -> None:
    """The converted messages go over HTTP and reach an OpenAI-compatible server intact."""
    finish_args = json.dumps({"message": "done"})
    events: list[Event] = [
        system(),
        user("Please finish."),
        ActionEvent(
            thought=[TextContent(text="Finishing.")],
            action=FinishAction(message="done"),
            tool_name="finish",
            tool_call_id="call_fin",
            tool_call=MessageToolCall(id="call_fin", name="finish", arguments=finish_args),
            llm_response_id="resp-1",
        ),
        ObservationEvent(
            observation=FinishObservation.from_text("done"),
            action_id="a1",
            tool_name="finish",
            tool_call_id="call_fin",
        ),
    ]
    llm_server.reply_text("Anything else?")
    response = llm.completion(to_messages(events))
    assert response.message.text == "Anything else?"
    sent = llm_server.requests[-1]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool"]
    assert sent[2]["tool_calls"][0]["id"] == "call_fin"
    assert sent[2]["tool_calls"][0]["function"]["arguments"] == finish_args
    assert sent[3]["tool_call_id"] == "call_fin"
    assert sent[3]["content"] == "done"
