"""OpenAI-compatible servers are called directly (`direct`), sending what litellm would,
with usage, cost and errors as before; litellm's own calls skip its success logging."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from llm_server import THINK_TOOLS, Reply, ScriptedLLMServer, ToolCall

from ohtui.sdk import LLM
from ohtui.sdk.llm import LLMContextWindowExceedError, direct
from ohtui.sdk.llm._litellm import call_options, litellm
from ohtui.sdk.llm.warm_up import warm_up
from ohtui.sdk.llm.wire import EncodedMessage, encode_messages

HISTORY: list[dict[str, Any]] = [
    {"role": "system", "content": "You are terse."},
    {"role": "user", "content": "Think, then say hi. ünïcode"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "think", "arguments": "{}"}}
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "name": "think", "content": "Logged."},
]


def make_llm(server: ScriptedLLMServer, **overrides: Any) -> LLM:
    settings: dict[str, Any] = {
        "model": "openai/test-model",
        "base_url": server.base_url,
        "api_key": "sk-test",
        "num_retries": 0,
        "timeout": 10,
    }
    return LLM(**{**settings, **overrides})


def test_openai_compatible_requests_go_direct_and_send_what_litellm_sends(
    llm_server: ScriptedLLMServer,
) -> None:
    llm_server.reply_text("hi")
    llm_server.reply_text("hi")
    llm = make_llm(llm_server, temperature=0.5, max_output_tokens=50)
    assert direct.is_direct(llm._request(THINK_TOOLS, llm._call_context, {}) | {"messages": []})
    llm.completion([EncodedMessage(m) for m in HISTORY], tools=THINK_TOOLS)
    litellm().completion(
        messages=HISTORY, **llm._request(THINK_TOOLS, llm._call_context, {}), **call_options()
    )
    ours, theirs = llm_server.requests
    for key in ("model", "messages", "tools", "temperature", "max_tokens"):
        assert ours[key] == theirs[key], key
    assert llm_server.request_headers[0]["authorization"] == "Bearer sk-test"


def test_other_providers_and_unknown_options_stay_with_litellm() -> None:
    base = {"model": "openai/m", "api_base": "http://127.0.0.1:1/v1", "messages": []}
    assert direct.is_direct(base)
    assert not direct.is_direct({**base, "model": "anthropic/claude"})
    assert not direct.is_direct({**base, "api_base": None})
    assert not direct.is_direct({**base, "api_version": "2024-01-01"})
    assert not direct.is_direct({**base, "logit_bias": {"1": 2}})


def test_direct_calls_keep_usage_and_cost(llm_server: ScriptedLLMServer) -> None:
    llm_server.reply_tool_call(
        "think", {"thought": "x"}, usage={"prompt_tokens": 120, "completion_tokens": 30}
    )
    llm = make_llm(llm_server, input_cost_per_token=0.001, output_cost_per_token=0.002)
    response = llm.completion(HISTORY, tools=THINK_TOOLS)
    assert response.message.tool_calls and response.message.tool_calls[0].name == "think"
    assert (response.usage.prompt_tokens, response.usage.completion_tokens) == (120, 30)
    assert llm.metrics.accumulated_cost == pytest.approx(0.12 + 0.06)
    assert llm.metrics.accumulated_token_usage.prompt_tokens == 120


def test_litellm_calls_keep_usage_and_cost_without_its_success_logging(
    llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from litellm.litellm_core_utils.litellm_logging import Logging

    logged: list[object] = []
    monkeypatch.setattr(Logging, "success_handler", lambda *args, **kw: logged.append(args))
    llm_server.reply_text("hello", usage={"prompt_tokens": 40, "completion_tokens": 5})
    # No provider prefix: litellm places it (custom_llm_provider), so litellm sends it.
    llm = make_llm(
        llm_server, model="test-model", custom_llm_provider="openai", input_cost_per_token=0.01
    )
    assert not direct.is_direct(llm._request(None, llm._call_context, {}) | {"messages": []})
    response = llm.completion(HISTORY)
    time.sleep(0.3)  # litellm's logging ran on a thread after the call
    assert response.message.text == "hello"
    assert (response.usage.prompt_tokens, response.usage.completion_tokens) == (40, 5)
    assert llm.metrics.accumulated_cost == pytest.approx(0.4)
    assert logged == []
    lib = litellm()
    # No callbacks, and no redaction for them (it copied every answer): nothing is logged.
    assert lib.success_callback == [] and lib.callbacks == [] and not lib.turn_off_message_logging


def test_direct_streaming_assembles_tool_calls(llm_server: ScriptedLLMServer) -> None:
    llm_server.reply(Reply(tool_calls=(ToolCall("think", '{"thought": "streamed"}'),)))
    deltas: list[Any] = []
    llm = make_llm(llm_server, stream=True)
    response = llm.completion(HISTORY, tools=THINK_TOOLS, on_token=deltas.append)
    call = response.message.tool_calls[0]  # type: ignore[index]
    assert (call.name, json.loads(call.arguments)) == ("think", {"thought": "streamed"})
    assert any(d.tool_calls for d in deltas)
    assert llm_server.requests[0]["stream"] is True


def test_direct_context_window_error_is_ours(llm_server: ScriptedLLMServer) -> None:
    llm_server.reply_context_window_error()
    with pytest.raises(LLMContextWindowExceedError) as info:
        make_llm(llm_server).completion(HISTORY)
    assert "context window" in str(info.value)
    assert isinstance(info.value.__cause__, direct.BadRequestError)


def test_encoded_messages_cannot_change_and_encode_once() -> None:
    message = EncodedMessage({"role": "user", "content": "hi", "thinking_blocks": []})
    with pytest.raises(TypeError, match="never changed"):
        message["content"] = "changed"
    with pytest.raises(TypeError):
        message.setdefault("name", "x")
    assert message.json() is message.json()
    assert json.loads(encode_messages([message, {"role": "tool", "content": "ok"}])) == [
        {"role": "user", "content": "hi"},  # Anthropic's thinking blocks are not sent
        {"role": "tool", "content": "ok"},
    ]


def test_warm_up_connects_and_imports_litellm(llm_server: ScriptedLLMServer) -> None:
    llm = make_llm(llm_server)
    direct._clients.pop(llm_server.base_url, None)
    warm_up(llm)
    client = direct._clients[llm_server.base_url.rstrip("/")]
    assert client._transport._pool.connections  # a connection is open, ready to reuse
    llm_server.reply_text("warm")
    assert llm.completion(HISTORY).message.text == "warm"


def test_warm_up_is_harmless_offline() -> None:
    llm = LLM(model="openai/m", base_url="http://127.0.0.1:9/v1", api_key="sk-nothing")
    started = time.monotonic()
    warm_up(llm)  # nothing listens on port 9: no error, no long wait
    assert time.monotonic() - started < 5
