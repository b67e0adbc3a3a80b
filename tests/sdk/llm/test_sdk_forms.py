"""The LLM layer in the forms code written against the OpenHands SDK uses: keyword token
usage, registry events, litellm messages and tool calls converted to ours, Responses-API
reasoning items, LLMResponse built from a raw response, and get_logger."""

from __future__ import annotations

import json
import logging

import pytest
from litellm import ChatCompletionMessageToolCall
from litellm.types.utils import Choices, Function, ModelResponse, Usage
from litellm.types.utils import Message as LiteLLMMessage

from ohtui.sdk import LLM, get_logger
from ohtui.sdk.conversation import ConversationStats
from ohtui.sdk.event import ActionEvent, LLMConvertibleEvent, MessageEvent
from ohtui.sdk.llm import (
    ImageContent,
    LLMRegistry,
    LLMResponse,
    Message,
    MessageToolCall,
    Metrics,
    MetricsSnapshot,
    ReasoningItemModel,
    RedactedThinkingBlock,
    RegistryEvent,
    TextContent,
    ThinkingBlock,
    content_to_str,
)
from ohtui.sdk.llm.metrics import RECENT_USAGES

# --- Metrics ------------------------------------------------------------------------------


def test_token_usage_is_added_by_keyword_or_position() -> None:
    metrics = Metrics(model_name="gpt-4")
    first = metrics.add_token_usage(
        prompt_tokens=100,
        completion_tokens=50,
        cache_read_tokens=10,
        cache_write_tokens=5,
        context_window=8000,
        response_id="resp-1",
        reasoning_tokens=7,
    )
    metrics.add_token_usage(200, 100, 0, 0, 4000, "resp-2")
    total = metrics.accumulated_token_usage
    assert (total.prompt_tokens, total.completion_tokens) == (300, 150)
    assert (total.cache_read_tokens, total.cache_write_tokens, total.reasoning_tokens) == (10, 5, 7)
    assert total.context_window == 8000
    assert first.per_turn_token == 150 and first.response_id == "resp-1"
    assert first.model == "gpt-4"
    latest = metrics.latest_token_usage
    assert latest is not None and latest.response_id == "resp-2"
    assert latest.per_turn_token == 300


def test_each_calls_usage_is_kept_in_memory_and_found_by_response_id() -> None:
    metrics = Metrics(model_name="gpt-4")
    metrics.add_token_usage(100, 50, response_id="resp-1")
    metrics.add_token_usage(200, 10, response_id="resp-2")
    assert [u.response_id for u in metrics.token_usages] == ["resp-1", "resp-2"]
    found = metrics.find_token_usage("resp-1")
    assert found is not None and (found.prompt_tokens, found.completion_tokens) == (100, 50)
    assert metrics.find_token_usage("resp-9") is None
    assert metrics.find_token_usage("") is None
    # Not saved: the totals are, so a save stays the same size however many calls were made.
    dumped = metrics.model_dump(mode="json")
    assert "token_usages" not in dumped
    restored = Metrics.model_validate(dumped)
    assert restored.token_usages == []
    assert restored.accumulated_token_usage.prompt_tokens == 300


def test_only_the_latest_calls_usages_are_kept() -> None:
    metrics = Metrics()
    for i in range(RECENT_USAGES + 5):
        metrics.add_token_usage(1, 1, response_id=f"r{i}")
    assert len(metrics.token_usages) == RECENT_USAGES
    assert metrics.token_usages[0].response_id == "r5"
    assert metrics.find_token_usage("r4") is None
    assert metrics.accumulated_token_usage.prompt_tokens == RECENT_USAGES + 5


def test_merged_metrics_hold_each_ones_usages_in_turn() -> None:
    first, second = Metrics(), Metrics()
    first.add_token_usage(1, 1, response_id="a")
    second.add_token_usage(2, 2, response_id="b")
    stats = ConversationStats(usage_to_metrics={"x": first, "y": second})
    combined = stats.get_combined_metrics()
    assert [u.response_id for u in combined.token_usages] == ["a", "b"]
    assert first.token_usages[0].response_id == "a" and len(first.token_usages) == 1


def test_latency_takes_the_response_id_too() -> None:
    metrics = Metrics()
    metrics.add_response_latency(1.5, "resp-1")
    metrics.add_response_latency(0.5)
    assert metrics.call_count == 2
    assert metrics.average_latency == pytest.approx(1.0)
    assert metrics.max_latency == pytest.approx(1.5)


def test_a_snapshot_without_token_usage_counts_zero() -> None:
    snapshot = MetricsSnapshot(model_name="m", accumulated_token_usage=None)
    assert snapshot.accumulated_token_usage.prompt_tokens == 0


# --- the registry -------------------------------------------------------------------------


def test_subscribers_get_a_registry_event_per_added_llm() -> None:
    registry = LLMRegistry()
    stats = ConversationStats()
    seen: list[RegistryEvent] = []
    registry.subscribe(stats.register_llm)
    registry.subscribe(seen.append)
    agent_llm = LLM(model="openai/a", usage_id="agent")
    registry.add(agent_llm)
    registry.add(LLM(model="openai/b", usage_id="condenser"))
    assert [event.llm.usage_id for event in seen] == ["agent", "condenser"]
    assert seen[0].llm is agent_llm
    assert stats.usage_to_metrics["agent"] is agent_llm.metrics

    agent_llm.metrics.add_cost(0.05)
    agent_llm.metrics.add_token_usage(100, 50, 0, 0, 8000, "resp-1")
    combined = stats.get_combined_metrics()
    assert combined.accumulated_cost == pytest.approx(0.05)
    assert combined.accumulated_token_usage.prompt_tokens == 100


def test_a_resumed_llm_keeps_its_saved_metrics() -> None:
    saved = Metrics(model_name="gpt-4", accumulated_cost=0.1)
    stats = ConversationStats(usage_to_metrics={"agent": saved})
    llm = LLM(model="openai/a", usage_id="agent")
    stats.register_llm(RegistryEvent(llm=llm))
    assert llm.metrics is saved


@pytest.mark.parametrize("model", ["", "   "])
def test_an_llm_needs_a_model(model: str) -> None:
    with pytest.raises(ValueError, match="model must be specified"):
        LLM(model=model)


# --- litellm messages and tool calls ------------------------------------------------------


def litellm_tool_call(call_id: str, name: str, arguments: str) -> ChatCompletionMessageToolCall:
    return ChatCompletionMessageToolCall(
        id=call_id, type="function", function=Function(name=name, arguments=arguments)
    )


def test_a_litellm_tool_call_becomes_ours() -> None:
    call = MessageToolCall.from_chat_tool_call(litellm_tool_call("call_1", "terminal", '{"a":1}'))
    assert call == MessageToolCall(id="call_1", name="terminal", arguments='{"a":1}')
    assert call.origin == "completion"
    as_dict = {"id": "call_2", "type": "function", "function": {"name": "t", "arguments": "{}"}}
    assert MessageToolCall.from_chat_tool_call(as_dict).id == "call_2"


@pytest.mark.parametrize(
    "raw",
    [
        {"id": "c", "type": "custom", "function": {"name": "t", "arguments": "{}"}},
        {"id": "c", "type": "function", "function": None},
        {"id": "c", "type": "function", "function": {"name": None, "arguments": "{}"}},
    ],
)
def test_a_tool_call_that_is_not_a_named_function_is_refused(raw: dict[str, object]) -> None:
    with pytest.raises(ValueError, match="tool call"):
        MessageToolCall.from_chat_tool_call(raw)


def test_a_litellm_message_becomes_ours() -> None:
    raw = LiteLLMMessage(
        role="assistant",
        content="Let me look.",
        tool_calls=[
            litellm_tool_call("call_1", "terminal", '{"command": "ls"}'),
            litellm_tool_call("call_2", "file_editor", '{"path": "/x"}'),
        ],
        reasoning_content="The user wants a listing.",
        thinking_blocks=[
            {"type": "thinking", "thinking": "hmm", "signature": "sig"},
            {"type": "redacted_thinking", "data": "opaque"},
        ],
    )
    message = Message.from_llm_chat_message(raw)
    assert message.role == "assistant"
    assert message.text == "Let me look."
    assert message.tool_calls is not None
    assert [c.name for c in message.tool_calls] == ["terminal", "file_editor"]
    assert message.tool_calls[0].arguments == '{"command": "ls"}'
    assert message.reasoning_content == "The user wants a listing."
    assert message.thinking_blocks == [
        ThinkingBlock(thinking="hmm", signature="sig"),
        RedactedThinkingBlock(data="opaque"),
    ]


def test_a_plain_litellm_answer_and_a_dict_answer_convert_alike() -> None:
    from_object = Message.from_llm_chat_message(LiteLLMMessage(role="assistant", content="Hi"))
    from_dict = Message.from_llm_chat_message({"role": "assistant", "content": "Hi"})
    assert from_object == from_dict == Message(role="assistant", content=[TextContent(text="Hi")])
    assert from_object.tool_calls is None


@pytest.mark.parametrize(
    "message",
    [
        Message(role="system", content=[TextContent(text="Be brief.")]),
        Message(
            role="user",
            content=[
                TextContent(text="What is in this picture?"),
                ImageContent(image_urls=["data:image/png;base64,AAAA", "https://x/y.png"]),
            ],
        ),
        Message(
            role="assistant",
            content=[TextContent(text="Looking.")],
            tool_calls=[MessageToolCall(id="c1", name="terminal", arguments='{"command": "ls"}')],
        ),
        Message(
            role="tool", content=[TextContent(text="a.txt")], tool_call_id="c1", name="terminal"
        ),
    ],
    ids=["system", "user-with-images", "assistant-with-calls", "tool-result"],
)
def test_a_chat_dict_converts_back_to_the_same_message(message: Message) -> None:
    assert Message.from_llm_chat_message(message.to_chat_dict()) == message


def test_a_function_role_message_is_refused() -> None:
    with pytest.raises(ValueError, match="function"):
        Message.from_llm_chat_message({"role": "function", "content": "x", "name": "f"})


def test_an_llm_response_can_be_built_from_a_raw_response() -> None:
    choice = Choices(
        finish_reason="stop", index=0, message=LiteLLMMessage(role="assistant", content="ok")
    )
    raw = ModelResponse(
        id="chatcmpl-42",
        choices=[choice],
        model="gpt-4o-mini",
        usage=Usage(prompt_tokens=10, completion_tokens=5, total_tokens=15),
    )
    message = Message.from_llm_chat_message(choice["message"])
    metrics = MetricsSnapshot(model_name="gpt-4o-mini", accumulated_token_usage=None)
    response = LLMResponse(message=message, metrics=metrics, raw_response=raw)
    assert response.id == "chatcmpl-42"
    assert response.message.text == "ok"


# --- Responses-API reasoning items --------------------------------------------------------


def test_a_reasoning_item_round_trips_on_a_message() -> None:
    item = ReasoningItemModel(
        id="rs_1", summary=["Check the directory"], encrypted_content="opaque-blob"
    )
    message = Message(
        role="assistant", content=[TextContent(text="Hi")], responses_reasoning_item=item
    )
    restored = Message.model_validate_json(message.model_dump_json())
    assert restored.responses_reasoning_item == item
    assert "responses_reasoning_item" not in message.to_chat_dict()


def test_a_batch_of_tool_calls_keeps_its_reasoning_item_and_shows_its_summary() -> None:
    item = ReasoningItemModel(id="rs_1", summary=["reasoned about the batch"])
    first, second = (
        ActionEvent(
            thought=[TextContent(text="two calls")] if n == 1 else [],
            responses_reasoning_item=item if n == 1 else None,
            tool_name="terminal",
            tool_call_id=f"call_{n}",
            tool_call=MessageToolCall(id=f"call_{n}", name="terminal", arguments="{}"),
            llm_response_id="resp-1",
        )
        for n in (1, 2)
    )
    [message] = LLMConvertibleEvent.events_to_messages([first, second])
    assert message.responses_reasoning_item == item
    assert "Reasoning:" in first.visualize.plain
    assert "reasoned about the batch" in first.visualize.plain
    restored = ActionEvent.model_validate_json(first.model_dump_json())
    assert restored.responses_reasoning_item == item


def test_an_empty_reasoning_item_shows_no_heading_and_the_opaque_part_never_shows() -> None:
    empty = MessageEvent(
        source="agent",
        llm_message=Message(
            role="assistant",
            content=[TextContent(text="Hello")],
            responses_reasoning_item=ReasoningItemModel(encrypted_content="opaque-blob"),
        ),
    )
    assert "Reasoning:" not in empty.visualize.plain
    assert "opaque-blob" not in empty.visualize.plain
    with_content = MessageEvent(
        source="agent",
        llm_message=Message(
            role="assistant",
            content=[TextContent(text="Hello")],
            responses_reasoning_item=ReasoningItemModel(content=["step one", "step two"]),
        ),
    )
    assert "Reasoning:" in with_content.visualize.plain
    assert "step two" in with_content.visualize.plain


def test_a_saved_action_with_a_reasoning_item_dict_still_loads() -> None:
    event = ActionEvent(
        tool_name="terminal",
        tool_call_id="call_1",
        tool_call=MessageToolCall(id="call_1", name="terminal", arguments="{}"),
        llm_response_id="resp-1",
    )
    data = json.loads(event.model_dump_json())
    data["responses_reasoning_item"] = {"id": "rs_9", "summary": ["old"], "status": "completed"}
    restored = ActionEvent.model_validate(data)
    assert restored.responses_reasoning_item == ReasoningItemModel(
        id="rs_9", summary=["old"], status="completed"
    )


# --- get_logger ---------------------------------------------------------------------------


def test_get_logger_gives_a_standard_logger() -> None:
    logger = get_logger("ohtui.test.sdk_forms")
    assert isinstance(logger, logging.Logger)
    assert logger is logging.getLogger("ohtui.test.sdk_forms")


def test_the_cache_hit_rate_is_a_share_of_the_input() -> None:
    metrics = Metrics(model_name="m")
    assert metrics.cache_hit_rate is None  # no input yet
    metrics.add_token_usage(prompt_tokens=1000, completion_tokens=10, cache_read_tokens=250)
    assert metrics.cache_hit_rate == pytest.approx(0.25)
    # Counted apart from the prompt by some providers: the share still stays below 1.
    metrics.add_token_usage(prompt_tokens=0, completion_tokens=10, cache_read_tokens=3000)
    assert metrics.cache_hit_rate == pytest.approx(3250 / 4250)


def test_content_reads_as_strings_with_images_as_placeholders() -> None:
    content = [
        TextContent(text="Before"),
        ImageContent(image_urls=["https://x/1.png"]),
        ImageContent(image_urls=["https://x/2.png", "https://x/3.png"]),
        TextContent(text="After"),
    ]
    assert content_to_str(content) == ["Before", "[image]", "[2 images]", "After"]
    assert content_to_str([]) == []
