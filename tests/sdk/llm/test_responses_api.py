"""LLM.responses over real HTTP (OpenAI's Responses API, from the scripted server), and which
models `uses_responses_api` picks."""

from __future__ import annotations

from typing import Any

import pytest
from llm_server import Reply, ScriptedLLMServer, ToolCall

from ohtui.sdk import LLM
from ohtui.sdk.llm import (
    ImageContent,
    LLMAuthenticationError,
    LLMBadRequestError,
    LLMNoResponseError,
    Message,
    MessageToolCall,
    ReasoningItemModel,
    TextContent,
)

READ_FILE_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "read_file",
        "description": "Read a file.",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
    },
}
CONVERSATION = [
    Message(role="system", content=[TextContent(text="Be brief.")]),
    Message(
        role="user",
        content=[TextContent(text="What is in a.txt?"), ImageContent(image_urls=["https://x/y"])],
    ),
    Message(
        role="assistant",
        content=[TextContent(text="Reading it.")],
        tool_calls=[MessageToolCall(id="call_1", name="read_file", arguments='{"path": "a.txt"}')],
        responses_reasoning_item=ReasoningItemModel(
            id="rs_0", summary=["Read first."], encrypted_content="opaque"
        ),
    ),
    Message(role="tool", content=[TextContent(text="hello")], tool_call_id="call_1", name="x"),
]


def make_llm(server: ScriptedLLMServer, **overrides: Any) -> LLM:
    settings: dict[str, Any] = {
        "model": "openai/test-model",
        "base_url": server.base_url,
        "api_key": "sk-test",
        "num_retries": 0,
        "timeout": 10,
        "api_mode": "responses",
    }
    return LLM(**{**settings, **overrides})


def test_a_conversation_goes_out_as_responses_input(llm_server: ScriptedLLMServer) -> None:
    llm_server.reply_text("It says hello.")
    # A model that reads images: the user's image goes out as an input_image.
    response = make_llm(llm_server, model="openai/gpt-4o").responses(
        CONVERSATION, tools=[READ_FILE_TOOL]
    )

    assert response.message.text == "It says hello."
    assert response.id == "resp_1"
    [body] = llm_server.requests
    assert body["model"] == "gpt-4o"
    assert body["instructions"] == "Be brief."
    assert body["store"] is False
    assert body["input"] == [
        {
            "role": "user",
            "content": [
                {"type": "input_text", "text": "What is in a.txt?"},
                {"type": "input_image", "image_url": "https://x/y"},
            ],
        },
        {
            "type": "reasoning",
            "id": "rs_0",
            "summary": [{"type": "summary_text", "text": "Read first."}],
            "encrypted_content": "opaque",
        },
        {"role": "assistant", "content": [{"type": "output_text", "text": "Reading it."}]},
        {
            "type": "function_call",
            "call_id": "call_1",
            "name": "read_file",
            "arguments": '{"path": "a.txt"}',
        },
        {"type": "function_call_output", "call_id": "call_1", "output": "hello"},
    ]
    assert body["tools"] == [
        {
            "type": "function",
            "name": "read_file",
            "description": "Read a file.",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
        }
    ]


def test_tool_calls_reasoning_and_usage_come_back(llm_server: ScriptedLLMServer) -> None:
    llm_server.reply(
        Reply(
            text="Let me look.",
            reasoning="The file is small.",
            tool_calls=(ToolCall("read_file", '{"path": "b.txt"}', "call_7"),),
            usage={
                "prompt_tokens": 120,
                "completion_tokens": 30,
                "prompt_tokens_details": {"cached_tokens": 100},
                "completion_tokens_details": {"reasoning_tokens": 12},
            },
        )
    )
    llm = make_llm(llm_server)
    response = llm.responses([Message(role="user", content=[TextContent(text="b?")])])

    message = response.message
    assert message.text == "Let me look."
    assert message.tool_calls == [
        MessageToolCall(
            id="call_7", name="read_file", arguments='{"path": "b.txt"}', origin="responses"
        )
    ]
    item = message.responses_reasoning_item
    assert item is not None
    assert (item.id, item.summary, item.encrypted_content) == (
        "rs_1",
        ["The file is small."],
        "encrypted-reasoning-1",
    )
    assert response.finish_reason == "tool_calls"
    usage = response.usage
    assert (usage.prompt_tokens, usage.completion_tokens) == (120, 30)
    assert (usage.cache_read_tokens, usage.reasoning_tokens) == (100, 12)
    assert llm.metrics.call_count == 1
    assert llm.metrics.accumulated_token_usage.prompt_tokens == 120


def test_errors_are_ours_and_retried_like_completions(llm_server: ScriptedLLMServer) -> None:
    llm_server.reply_error(401)
    with pytest.raises(LLMAuthenticationError, match="openai/test-model"):
        make_llm(llm_server).responses([Message(role="user", content=[TextContent(text="x")])])

    llm_server.reply_error(503)
    llm_server.reply_text("Second time.")
    retrying = make_llm(llm_server, num_retries=1, retry_min_wait=0.01, retry_max_wait=0.01)
    answer = retrying.responses([Message(role="user", content=[TextContent(text="x")])])
    assert answer.message.text == "Second time."

    llm_server.reply_text("")
    with pytest.raises(LLMNoResponseError):
        make_llm(llm_server).responses([Message(role="user", content=[TextContent(text="x")])])


def test_another_providers_model_is_refused_before_any_request() -> None:
    llm = LLM(model="anthropic/claude-sonnet-4-20250514", api_key="sk-ant-never-sent")
    with pytest.raises(LLMBadRequestError, match="Responses API"):
        llm.responses([Message(role="user", content=[TextContent(text="x")])])


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        ({"model": "gpt-5-mini"}, True),
        ({"model": "openai/gpt-5.5"}, True),
        ({"model": "openai/codex-mini-latest"}, True),
        ({"model": "gpt-4o"}, False),
        ({"model": "anthropic/claude-sonnet-4-20250514"}, False),
        # An OpenAI-compatible server may not speak the Responses API.
        ({"model": "openai/gpt-5", "base_url": "http://127.0.0.1:9/v1"}, False),
        ({"model": "gpt-5", "api_mode": "chat"}, False),
        (
            {"model": "openai/local", "base_url": "http://127.0.0.1:9/v1", "api_mode": "responses"},
            True,
        ),
    ],
)
def test_which_models_use_the_responses_api(settings: dict[str, Any], expected: bool) -> None:
    assert LLM(**settings).uses_responses_api() is expected


def test_a_model_that_reads_no_images_gets_no_input_image(llm_server: ScriptedLLMServer) -> None:
    llm_server.reply_text("It says hello.")
    make_llm(llm_server).responses(CONVERSATION)  # test-model: unknown, so text only
    [body] = llm_server.requests
    assert body["input"][0] == {
        "role": "user",
        "content": [{"type": "input_text", "text": "What is in a.txt?"}],
    }
