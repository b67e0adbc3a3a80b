"""The LLM's transport seam: every chat completion goes through `litellm_completion`, and
`stream` can be switched off per call."""

from __future__ import annotations

from typing import Any

import pytest
from llm_server import ScriptedLLMServer

from ohtui.sdk import LLM
from ohtui.sdk.llm import LLMCallContext, LLMStreamChunk, Message, TextContent
from ohtui.sdk.llm import llm as llm_module
from ohtui.sdk.llm._litellm import litellm

USER = [Message(role="user", content=[TextContent(text="Say hello.")])]


def make_llm(server: ScriptedLLMServer, **overrides: Any) -> LLM:
    settings: dict[str, Any] = {
        "model": "openai/test-model",
        "base_url": server.base_url,
        "api_key": "sk-test",
        "num_retries": 0,
        "timeout": 10,
    }
    return LLM(**{**settings, **overrides})


@pytest.fixture
def seen(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """The keyword arguments of every `litellm_completion` call (which still goes out)."""
    calls: list[dict[str, Any]] = []
    real = llm_module.litellm_completion

    def recording(**request: Any) -> Any:
        calls.append(request)
        return real(**request)

    monkeypatch.setattr(llm_module, "litellm_completion", recording)
    return calls


def test_every_completion_goes_through_litellm_completion(
    llm_server: ScriptedLLMServer, seen: list[dict[str, Any]]
) -> None:
    llm_server.reply_text("plain")
    llm_server.reply_text("streamed")
    plain = make_llm(llm_server)
    streaming = make_llm(llm_server, stream=True, usage_id="streaming")
    chunks: list[LLMStreamChunk] = []

    assert plain.completion(USER).message.text == "plain"
    assert streaming.completion(USER, on_token=chunks.append).message.text == "streamed"

    assert [call["messages"] for call in seen] == [[{"role": "user", "content": "Say hello."}]] * 2
    assert [call.get("stream", False) for call in seen] == [False, True]
    assert all(call["model"] == "openai/test-model" for call in seen)
    assert "".join(chunk.content for chunk in chunks) == "streamed"
    assert streaming.metrics.call_count == 1


def test_replacing_litellm_completion_replaces_the_provider(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    lib = litellm()
    reply = lib.ModelResponse(
        id="resp-fake",
        choices=[{"index": 0, "finish_reason": "stop", "message": {"content": "canned"}}],
        usage={"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10},
    )
    monkeypatch.setattr(llm_module, "litellm_completion", lambda **request: reply)
    llm = LLM(model="openai/nowhere", api_key="sk-never-sent", base_url="http://127.0.0.1:9")

    response = llm.completion(USER)

    assert (response.id, response.message.text) == ("resp-fake", "canned")
    assert (response.usage.prompt_tokens, response.usage.completion_tokens) == (7, 3)


def test_stream_false_turns_streaming_off_for_one_call(
    llm_server: ScriptedLLMServer,
) -> None:
    llm = make_llm(llm_server, stream=True)
    llm_server.reply_text("whole")
    llm_server.reply_text("in pieces")
    chunks: list[LLMStreamChunk] = []

    assert llm.completion(USER, on_token=chunks.append, stream=False).message.text == "whole"
    assert chunks == []
    assert llm.completion(USER, on_token=chunks.append).message.text == "in pieces"

    assert [body.get("stream", False) for body in llm_server.requests] == [False, True]
    assert llm.stream is True


def test_a_streamed_reply_keeps_its_tool_calls_reasoning_and_usage(
    llm_server: ScriptedLLMServer,
) -> None:
    llm = make_llm(llm_server, stream=True)
    llm_server.reply_tool_call("read_file", {"path": "a.txt"}, text="Looking.", call_id="call_9")
    llm_server.reply_text("Done.", reasoning="Thought it over.")

    first = llm.completion(USER, on_token=lambda chunk: None)
    second = llm.completion(USER, on_token=lambda chunk: None)

    assert first.message.text == "Looking."
    assert first.message.tool_calls is not None
    assert [(c.id, c.name, c.arguments) for c in first.message.tool_calls] == [
        ("call_9", "read_file", '{"path": "a.txt"}')
    ]
    assert first.finish_reason == "tool_calls"
    assert first.id.startswith("chatcmpl-")
    assert second.message.reasoning_content == "Thought it over."
    assert second.usage.prompt_tokens > 0
    assert llm.metrics.accumulated_token_usage.completion_tokens > 0


def canned(text: str = "ok") -> Any:
    return litellm().ModelResponse(
        id="resp-canned",
        choices=[{"index": 0, "finish_reason": "stop", "message": {"content": text}}],
        usage={"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    )


def test_openai_requests_carry_the_prompt_cache_key(monkeypatch: pytest.MonkeyPatch) -> None:
    sent: list[dict[str, Any]] = []
    monkeypatch.setattr(
        llm_module, "litellm_completion", lambda **request: sent.append(request) or canned()
    )
    llm = LLM(model="gpt-4o-mini", api_key="sk-never-sent")
    llm.completion(USER)
    llm.set_call_context(LLMCallContext(prompt_cache_key="conversation-1"))
    llm.completion(USER)
    llm.completion(USER, call_context=LLMCallContext(prompt_cache_key="explicit"))
    assert [r.get("prompt_cache_key") for r in sent] == [None, "conversation-1", "explicit"]


def test_other_endpoints_never_get_a_prompt_cache_key(llm_server: ScriptedLLMServer) -> None:
    # An OpenAI-compatible server, or another provider, may refuse a field it does not know.
    llm = make_llm(llm_server)
    llm.set_call_context(LLMCallContext(prompt_cache_key="conversation-1"))
    llm_server.reply_text("fine")
    assert llm.completion(USER).message.text == "fine"
    assert "prompt_cache_key" not in llm_server.requests[0]
