"""Tests of LLM over real HTTP against the scripted OpenAI-compatible server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from llm_server import ScriptedLLMServer
from pydantic import PrivateAttr

from ohtui.sdk import LLM
from ohtui.sdk.llm import (
    LLMCancelledError,
    LLMNoResponseError,
    LLMRegistry,
    LLMStreamChunk,
    Message,
    MessageToolCall,
    Metrics,
    TextContent,
    ToolCallDelta,
)
from ohtui.sdk.llm._litellm import litellm

REPO_ROOT = Path(__file__).resolve().parents[3]
USER = [Message(role="user", content=[TextContent(text="Say hello.")])]
READ_FILE_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "read_file",
        "description": "Read a file.",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
        },
    },
}


@pytest.fixture(autouse=True, scope="module")
def _litellm_imported() -> None:
    """Import litellm up front so that its seconds-long first import skews no timing."""
    litellm()


def make_llm(server: ScriptedLLMServer, **overrides: Any) -> LLM:
    settings: dict[str, Any] = {
        "model": "openai/test-model",
        "base_url": server.base_url,
        "api_key": "sk-test",
        "num_retries": 0,
        "timeout": 10,
    }
    settings.update(overrides)
    return LLM(**settings)


# ------------------------------------------------------------------ text


def test_non_streaming_text(llm: LLM, llm_server: ScriptedLLMServer) -> None:
    llm_server.reply_text("Hello, world!")
    response = llm.completion(USER)
    assert response.message.role == "assistant"
    assert response.message.text == "Hello, world!"
    assert response.message.tool_calls is None
    assert response.id == "chatcmpl-1"
    assert response.finish_reason == "stop"
    assert llm_server.requests[0]["messages"] == [{"role": "user", "content": "Say hello."}]


def test_plain_dict_messages_are_accepted(llm: LLM, llm_server: ScriptedLLMServer) -> None:
    llm_server.reply_text("ok")
    llm.completion([{"role": "user", "content": "raw dict"}])
    assert llm_server.requests[0]["messages"] == [{"role": "user", "content": "raw dict"}]


def test_non_streaming_reasoning_content(llm: LLM, llm_server: ScriptedLLMServer) -> None:
    llm_server.reply_text("42", reasoning="Six times seven.")
    response = llm.completion(USER)
    assert response.message.text == "42"
    assert response.message.reasoning_content == "Six times seven."


def test_finish_reason_is_passed_through(llm: LLM, llm_server: ScriptedLLMServer) -> None:
    llm_server.reply_text("cut o", finish_reason="length")
    assert llm.completion(USER).finish_reason == "length"


# ------------------------------------------------------------------ streaming


def test_streaming_text_reaches_the_token_callback(llm_server: ScriptedLLMServer) -> None:
    llm = make_llm(llm_server, stream=True)
    chunks: list[LLMStreamChunk] = []
    pieces = ["Hel", "lo, ", "wor", "ld!"]
    llm_server.reply_text("Hello, world!", chunks=pieces)
    response = llm.completion(USER, on_token=chunks.append)
    assert all(isinstance(c, LLMStreamChunk) for c in chunks)
    assert [c.content for c in chunks if c.content] == pieces
    assert "".join(c.content for c in chunks) == "Hello, world!"
    assert response.message.text == "Hello, world!"
    assert response.id == "chatcmpl-1"
    assert {c.response_id for c in chunks} == {"chatcmpl-1"}
    body = llm_server.requests[0]
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}


def test_streaming_reasoning_chunks(llm_server: ScriptedLLMServer) -> None:
    llm = make_llm(llm_server, stream=True)
    chunks: list[LLMStreamChunk] = []
    llm_server.reply_text("The answer is 42.", reasoning="Multiply six by seven.")
    response = llm.completion(USER, on_token=chunks.append)
    reasoning = [c.reasoning_content for c in chunks if c.reasoning_content]
    assert len(reasoning) > 1
    assert "".join(reasoning) == "Multiply six by seven."
    # reasoning streams before the answer
    first_content = next(i for i, c in enumerate(chunks) if c.content)
    last_reasoning = max(i for i, c in enumerate(chunks) if c.reasoning_content)
    assert last_reasoning < first_content
    assert response.message.reasoning_content == "Multiply six by seven."
    assert response.message.text == "The answer is 42."


def test_streaming_tool_call_deltas(llm_server: ScriptedLLMServer) -> None:
    llm = make_llm(llm_server, stream=True)
    chunks: list[LLMStreamChunk] = []
    calls = [("read_file", {"path": "src/app.py"}), ("read_file", {"path": "README.md"})]
    llm_server.reply_tool_calls(calls, text="Reading both.")
    response = llm.completion(USER, tools=[READ_FILE_TOOL], on_token=chunks.append)

    deltas: list[ToolCallDelta] = [d for c in chunks for d in c.tool_calls]
    assert {d.index for d in deltas} == {0, 1}
    for index, (name, args) in enumerate(calls):
        mine = [d for d in deltas if d.index == index]
        assert mine[0].id == f"call_1_{index}"
        assert mine[0].name == name
        assert "".join(d.arguments for d in mine) == json.dumps(args)
        assert len(mine) > 2  # arguments arrive in pieces
    assert "".join(c.content for c in chunks) == "Reading both."

    assert response.message.text == "Reading both."
    assert response.message.tool_calls == [
        MessageToolCall(id="call_1_0", name="read_file", arguments=json.dumps(calls[0][1])),
        MessageToolCall(id="call_1_1", name="read_file", arguments=json.dumps(calls[1][1])),
    ]
    assert response.finish_reason == "tool_calls"


def test_streaming_without_a_callback(llm_server: ScriptedLLMServer) -> None:
    llm = make_llm(llm_server, stream=True)
    llm_server.reply_text("quiet stream")
    assert llm.completion(USER).message.text == "quiet stream"


# ------------------------------------------------------------------ tool calls


def test_one_tool_call_keeps_raw_arguments(llm: LLM, llm_server: ScriptedLLMServer) -> None:
    raw = '{"path":   "a.txt" ,"encoding":"utf-8"}'
    llm_server.reply_tool_call("read_file", raw, call_id="call_abc", text="Let me look.")
    response = llm.completion(USER, tools=[READ_FILE_TOOL])
    assert response.message.tool_calls == [
        MessageToolCall(id="call_abc", name="read_file", arguments=raw)
    ]
    assert response.message.text == "Let me look."
    assert response.finish_reason == "tool_calls"


def test_malformed_arguments_are_kept_verbatim(llm: LLM, llm_server: ScriptedLLMServer) -> None:
    llm_server.reply_tool_call("read_file", '{"path": "a.t')
    [call] = llm.completion(USER, tools=[READ_FILE_TOOL]).message.tool_calls or []
    assert call.arguments == '{"path": "a.t'


def test_several_tool_calls_in_order(llm: LLM, llm_server: ScriptedLLMServer) -> None:
    calls = [
        ("read_file", {"path": "one.txt"}),
        ("read_file", {"path": "two.txt"}),
        ("read_file", {"path": "three.txt"}),
    ]
    llm_server.reply_tool_calls(calls)
    message = llm.completion(USER, tools=[READ_FILE_TOOL]).message
    assert message.tool_calls is not None
    assert [(tc.id, tc.name, json.loads(tc.arguments)) for tc in message.tool_calls] == [
        (f"call_1_{i}", name, args) for i, (name, args) in enumerate(calls)
    ]
    assert message.text == ""
    assert message.to_chat_dict()["content"] is None


# ------------------------------------------------------------------ the request


def test_request_carries_tools_and_sampling_settings(llm_server: ScriptedLLMServer) -> None:
    llm = make_llm(llm_server, temperature=0.3, max_output_tokens=123, top_p=0.9)
    llm_server.reply_text("ok")
    llm.completion(USER, tools=[READ_FILE_TOOL])
    body = llm_server.requests[0]
    assert body["model"] == "test-model"
    assert body["tools"] == [READ_FILE_TOOL]
    assert body["temperature"] == 0.3
    assert body["max_tokens"] == 123
    assert body["top_p"] == 0.9
    assert "stream" not in body


def test_unset_settings_are_not_sent(llm: LLM, llm_server: ScriptedLLMServer) -> None:
    llm_server.reply_text("ok")
    llm.completion(USER)
    body = llm_server.requests[0]
    for key in ("temperature", "max_tokens", "top_p", "tools", "stream", "stream_options"):
        assert key not in body


def test_api_key_goes_in_the_header_not_the_body(llm_server: ScriptedLLMServer) -> None:
    llm = make_llm(llm_server, api_key="sk-very-secret-123")
    llm_server.reply_text("ok")
    llm.completion(USER)
    assert "sk-very-secret-123" not in json.dumps(llm_server.requests[0])
    assert llm_server.request_headers[0]["authorization"] == "Bearer sk-very-secret-123"


def test_extra_headers_are_sent(llm_server: ScriptedLLMServer) -> None:
    llm = make_llm(llm_server, extra_headers={"X-Ohtui-Test": "yes"})
    llm_server.reply_text("ok")
    llm.completion(USER)
    assert llm_server.request_headers[0]["x-ohtui-test"] == "yes"


# ------------------------------------------------------------------ metrics


SCRIPTED_USAGE = {
    "prompt_tokens": 1200,
    "completion_tokens": 300,
    "prompt_tokens_details": {"cached_tokens": 800},
    "completion_tokens_details": {"reasoning_tokens": 120},
}


def test_usage_is_recorded(llm: LLM, llm_server: ScriptedLLMServer) -> None:
    llm_server.reply_text("ok", usage=SCRIPTED_USAGE)
    response = llm.completion(USER)
    usage = response.usage
    assert usage.prompt_tokens == 1200
    assert usage.completion_tokens == 300
    assert usage.cache_read_tokens == 800
    assert usage.reasoning_tokens == 120
    assert usage.per_turn_token == 1500
    assert usage.response_id == "chatcmpl-1"
    totals = llm.metrics.accumulated_token_usage
    assert (totals.prompt_tokens, totals.completion_tokens) == (1200, 300)
    assert llm.metrics.latest_token_usage == usage


def test_streaming_usage_is_recorded(llm_server: ScriptedLLMServer) -> None:
    llm = make_llm(llm_server, stream=True)
    llm_server.reply_text("streamed", usage=SCRIPTED_USAGE)
    usage = llm.completion(USER).usage
    assert usage.prompt_tokens == 1200
    assert usage.completion_tokens == 300
    assert usage.cache_read_tokens == 800
    assert usage.reasoning_tokens == 120


def test_latency_is_recorded(llm: LLM, llm_server: ScriptedLLMServer) -> None:
    llm_server.reply_text("slow", delay=0.2)
    llm_server.reply_text("fast")
    llm.completion(USER)
    llm.completion(USER)
    metrics = llm.metrics
    assert metrics.call_count == 2
    assert metrics.max_latency >= 0.2
    assert metrics.total_latency >= metrics.max_latency
    assert 0 < metrics.average_latency <= metrics.max_latency


def test_cost_uses_configured_prices(llm_server: ScriptedLLMServer) -> None:
    llm = make_llm(llm_server, input_cost_per_token=1e-6, output_cost_per_token=4e-6)
    llm_server.reply_text("ok", usage={"prompt_tokens": 1000, "completion_tokens": 500})
    response = llm.completion(USER)
    assert response.metrics.accumulated_cost == pytest.approx(1000 * 1e-6 + 500 * 4e-6)
    assert llm.metrics.accumulated_cost == pytest.approx(0.003)


def test_cost_of_an_unknown_model_is_zero(llm: LLM, llm_server: ScriptedLLMServer) -> None:
    llm_server.reply_text("ok", usage={"prompt_tokens": 1000, "completion_tokens": 500})
    llm_server.reply_text("ok again", usage={"prompt_tokens": 1000, "completion_tokens": 500})
    assert llm.completion(USER).metrics.accumulated_cost == 0.0
    assert llm.completion(USER).metrics.accumulated_cost == 0.0
    assert llm.metrics.accumulated_token_usage.prompt_tokens == 2000


def test_cost_of_a_known_model_comes_from_litellm_prices(llm_server: ScriptedLLMServer) -> None:
    llm = make_llm(llm_server, model="openai/gpt-4o")
    llm_server.reply_text("ok", usage={"prompt_tokens": 1000, "completion_tokens": 500})
    assert llm.completion(USER).metrics.accumulated_cost > 0


def test_metrics_accumulate_across_calls(llm_server: ScriptedLLMServer) -> None:
    llm = make_llm(llm_server, input_cost_per_token=1e-6, output_cost_per_token=1e-6)
    llm_server.reply_text("one", usage={"prompt_tokens": 100, "completion_tokens": 10})
    llm_server.reply_text(
        "two",
        usage={
            "prompt_tokens": 200,
            "completion_tokens": 20,
            "prompt_tokens_details": {"cached_tokens": 50},
        },
    )
    first = llm.completion(USER)
    second = llm.completion(USER)
    totals = llm.metrics.accumulated_token_usage
    assert totals.prompt_tokens == 300
    assert totals.completion_tokens == 30
    assert totals.cache_read_tokens == 50
    assert totals.per_turn_token == 220  # the last call's
    assert totals.response_id == "chatcmpl-2"
    assert llm.metrics.accumulated_cost == pytest.approx(330e-6)
    # each response carries a snapshot, not the live metrics
    assert first.metrics.accumulated_cost == pytest.approx(110e-6)
    assert first.metrics.accumulated_token_usage.prompt_tokens == 100
    assert second.metrics.accumulated_cost == pytest.approx(330e-6)


def test_restored_metrics_keep_accumulating(llm: LLM, llm_server: ScriptedLLMServer) -> None:
    saved = Metrics(model_name="openai/test-model", accumulated_cost=1.5, call_count=4)
    llm.restore_metrics(saved)
    llm_server.reply_text("ok")
    llm.completion(USER)
    assert llm.metrics is saved
    assert saved.call_count == 5
    assert saved.accumulated_cost == pytest.approx(1.5)


class ScriptedLLM(LLM):
    """A test double of the kind SDK users write: an LLM subclass with private state."""

    _script: list[str] = PrivateAttr(default_factory=list)


def test_model_copy_has_its_own_metrics_but_keeps_a_subclass_state(
    llm: LLM, llm_server: ScriptedLLMServer
) -> None:
    llm_server.reply_text("ok")
    llm.completion(USER)
    copy = llm.model_copy(update={"usage_id": "copy", "timeout": 7})
    assert (copy.usage_id, copy.timeout, copy.model) == ("copy", 7, llm.model)
    assert copy.metrics is not llm.metrics
    assert copy.metrics.call_count == 0

    scripted = ScriptedLLM(model="test")
    scripted._script.append("first answer")
    copied = scripted.model_copy(update={"usage_id": "hook"})
    assert isinstance(copied, ScriptedLLM)
    assert copied._script == ["first answer"]
    with pytest.raises(ValueError, match="timeout"):
        llm.model_copy(update={"timeout": -1})  # an update is validated


def test_metrics_per_usage_id_through_the_registry(llm_server: ScriptedLLMServer) -> None:
    registry = LLMRegistry()
    added: list[str] = []
    registry.subscribe(lambda event: added.append(event.llm.usage_id))
    agent_llm = make_llm(llm_server, usage_id="agent")
    condenser_llm = make_llm(llm_server, usage_id="condenser")
    registry.add(agent_llm)
    registry.add(condenser_llm)
    registry.add(agent_llm)  # the same instance again is a no-op
    assert added == ["agent", "condenser"]
    assert registry.list_usage_ids() == ["agent", "condenser"]

    llm_server.reply_text("a1", usage={"prompt_tokens": 100, "completion_tokens": 10})
    llm_server.reply_text("a2", usage={"prompt_tokens": 100, "completion_tokens": 10})
    llm_server.reply_text("c1", usage={"prompt_tokens": 7, "completion_tokens": 3})
    registry.get("agent").completion(USER)
    registry.get("agent").completion(USER)
    registry.get("condenser").completion(USER)
    agent_metrics = registry.get("agent").metrics
    condenser_metrics = registry.get("condenser").metrics
    assert agent_metrics is not condenser_metrics
    assert agent_metrics.call_count == 2
    assert agent_metrics.accumulated_token_usage.prompt_tokens == 200
    assert condenser_metrics.call_count == 1
    assert condenser_metrics.accumulated_token_usage.prompt_tokens == 7

    with pytest.raises(KeyError, match="summarizer"):
        registry.get("summarizer")


def test_registry_rejects_a_duplicate_usage_id(llm_server: ScriptedLLMServer) -> None:
    registry = LLMRegistry()
    registry.add(make_llm(llm_server, usage_id="agent"))
    with pytest.raises(ValueError, match="agent"):
        registry.add(make_llm(llm_server, usage_id="agent"))
    assert registry.list_usage_ids() == ["agent"]


# ------------------------------------------------------------------ secrets


def test_api_key_is_never_serialized_but_kept_in_memory(llm_server: ScriptedLLMServer) -> None:
    llm = make_llm(llm_server, api_key="sk-live-abcdef")
    dumped = llm.model_dump_json()
    assert "sk-live-abcdef" not in dumped
    assert json.loads(dumped)["api_key"] is None
    assert "sk-live-abcdef" not in repr(llm)
    assert "sk-live-abcdef" not in str(llm.model_dump())
    assert llm.api_key is not None
    assert llm.api_key.get_secret_value() == "sk-live-abcdef"
    exposed = llm.model_dump(mode="json", context={"expose_secrets": True})
    assert exposed["api_key"] == "sk-live-abcdef"
    # a reloaded config has no key, but the live object still works
    assert LLM.model_validate_json(dumped).api_key is None
    llm_server.reply_text("still authorised")
    assert llm.completion(USER).message.text == "still authorised"
    assert llm_server.request_headers[0]["authorization"] == "Bearer sk-live-abcdef"


# ------------------------------------------------------------------ empty answers


def test_empty_reply_raises_no_response(llm: LLM, llm_server: ScriptedLLMServer) -> None:
    llm_server.reply_text("")
    with pytest.raises(LLMNoResponseError, match="openai/test-model"):
        llm.completion(USER)


def test_empty_streamed_reply_raises_no_response(llm_server: ScriptedLLMServer) -> None:
    llm = make_llm(llm_server, stream=True)
    llm_server.reply_text("")
    with pytest.raises(LLMNoResponseError):
        llm.completion(USER, on_token=lambda chunk: None)


def test_empty_reply_is_retried(llm_server: ScriptedLLMServer) -> None:
    llm = make_llm(llm_server, num_retries=1, retry_min_wait=0.01, retry_max_wait=0.01)
    llm_server.reply_text("")
    llm_server.reply_text("second time lucky")
    assert llm.completion(USER).message.text == "second time lucky"
    assert len(llm_server.requests) == 2


# ------------------------------------------------------------------ cancel


def cancel_after(seconds: float) -> tuple[threading.Event, list[float]]:
    cancel = threading.Event()
    set_at: list[float] = []

    def fire() -> None:
        set_at.append(time.monotonic())
        cancel.set()

    timer = threading.Timer(seconds, fire)
    timer.daemon = True
    timer.start()
    return cancel, set_at


def test_cancel_interrupts_a_slow_call(llm: LLM, llm_server: ScriptedLLMServer) -> None:
    llm_server.reply_text("too late", delay=5)
    cancel, set_at = cancel_after(0.2)
    started = time.monotonic()
    with pytest.raises(LLMCancelledError):
        llm.completion(USER, cancel=cancel)
    ended = time.monotonic()
    assert set_at, "the call ended before cancel was set"
    assert ended - set_at[0] < 0.5
    assert ended - started < 1.5
    assert llm.metrics.call_count == 0


def test_cancel_interrupts_a_slow_stream(llm_server: ScriptedLLMServer) -> None:
    llm = make_llm(llm_server, stream=True)
    llm_server.reply_text("one two three four five six", chunk_delay=0.3)
    cancel = threading.Event()
    chunks: list[LLMStreamChunk] = []
    set_at: list[float] = []

    def on_token(chunk: LLMStreamChunk) -> None:
        chunks.append(chunk)
        if not cancel.is_set():
            set_at.append(time.monotonic())
            cancel.set()

    with pytest.raises(LLMCancelledError):
        llm.completion(USER, on_token=on_token, cancel=cancel)
    assert time.monotonic() - set_at[0] < 0.5
    assert chunks and chunks[0].content == "one "


def test_cancel_interrupts_a_retry_wait(llm_server: ScriptedLLMServer) -> None:
    llm = make_llm(llm_server, num_retries=3, retry_min_wait=5, retry_max_wait=5)
    llm_server.reply_error(503)
    cancel, set_at = cancel_after(0.3)
    with pytest.raises(LLMCancelledError):
        llm.completion(USER, cancel=cancel)
    assert time.monotonic() - set_at[0] < 0.5
    assert len(llm_server.requests) == 1


def test_unset_cancel_event_does_not_disturb_a_call(
    llm: LLM, llm_server: ScriptedLLMServer
) -> None:
    llm_server.reply_text("fine", delay=0.1)
    assert llm.completion(USER, cancel=threading.Event()).message.text == "fine"


# ------------------------------------------------------------------ silence


def test_litellm_prints_nothing(
    llm_server: ScriptedLLMServer, capfd: pytest.CaptureFixture[str]
) -> None:
    capfd.readouterr()
    llm = make_llm(llm_server)
    streaming = make_llm(llm_server, stream=True)
    llm_server.reply_text("hello")
    llm.completion(USER)
    llm_server.reply_tool_call("read_file", {"path": "x"})
    streaming.completion(USER, tools=[READ_FILE_TOOL], on_token=lambda chunk: None)
    for status in (400, 401, 404, 429, 500, 503):
        llm_server.reply_error(status)
        with pytest.raises(Exception, match="openai/test-model"):
            llm.completion(USER)
    llm_server.reply_context_window_error()
    with pytest.raises(Exception, match="context window"):
        llm.completion(USER)
    closed = ScriptedLLMServer()
    closed.close()
    with pytest.raises(Exception, match="openai/test-model"):
        make_llm(closed).completion(USER)
    out, err = capfd.readouterr()
    assert out == ""
    assert err == ""


def test_importing_litellm_through_the_sdk_prints_nothing() -> None:
    """...and leaves the collector alone in a program using the engine as a library, while
    ohtui's own programs run no full pass during the import and then freeze litellm's
    ~380,000 objects out of them."""
    script = (
        "import gc, sys\n"
        "from ohtui.sdk.llm import _litellm\n"
        "_litellm.litellm()\n"
        "assert 'litellm' in sys.modules\n"
        "assert gc.get_freeze_count() == 0, gc.get_freeze_count()\n"
        "from ohtui.long_lived import own_program\n"
        "own_program()\n"
        "_litellm._module = None  # as if imported first in one of ohtui's programs\n"
        "load, seen = _litellm._load, []\n"
        "_litellm._load = lambda: seen.append(gc.get_threshold()[2]) or load()\n"
        "before = gc.get_threshold()\n"
        "_litellm.litellm()\n"
        "assert gc.get_freeze_count() > 100_000, gc.get_freeze_count()\n"
        "assert seen == [1 << 30], seen  # no full pass during the import\n"
        "assert gc.get_threshold() == before, gc.get_threshold()\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("LITELLM")}
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    assert result.stderr == ""


# ------------------------------------------------------------------ context window


def test_context_window_prefers_max_input_tokens() -> None:
    assert LLM(model="openai/gpt-4o", max_input_tokens=5000).context_window == 5000
    assert LLM(model="openai/test-model", max_input_tokens=8192).context_window == 8192


def test_context_window_of_unknown_and_known_models() -> None:
    assert LLM(model="openai/test-model").context_window is None
    window = LLM(model="gpt-4o").context_window
    assert window is not None
    assert window > 8192


def test_context_window_is_reported_in_usage(llm_server: ScriptedLLMServer) -> None:
    llm = make_llm(llm_server, max_input_tokens=4096)
    llm_server.reply_text("ok")
    assert llm.completion(USER).usage.context_window == 4096


# ------------------------------------------------------------------ connecting


@pytest.fixture
def black_hole() -> Iterator[str]:
    """A base URL whose server never takes the connection (its accept queue is full), as
    behind a firewall that drops packets: connecting hangs until the client gives up."""
    import socket

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(0)
    filler = socket.create_connection(server.getsockname())  # fills the queue of one
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}/v1"
    finally:
        filler.close()
        server.close()


def test_an_unreachable_server_fails_after_the_connect_timeout_not_the_answer_timeout(
    llm_server: ScriptedLLMServer, black_hole: str
) -> None:
    from ohtui.sdk.llm import LLMError

    llm = make_llm(llm_server, base_url=black_hole, timeout=60, connect_timeout=1)
    started = time.monotonic()
    with pytest.raises(LLMError):
        llm.completion(USER)
    assert time.monotonic() - started < 10


def test_attempts_and_retries_are_announced(llm_server: ScriptedLLMServer) -> None:
    llm = make_llm(llm_server, num_retries=2, retry_min_wait=0.01, retry_max_wait=0.01)
    heard: list[str] = []
    llm.add_attempt_listener(lambda attempt: heard.append(f"attempt {attempt}"))
    llm.add_retry_listener(lambda attempt, wait, error: heard.append(f"retry {attempt}"))
    llm_server.reply_error(503, "overloaded")
    llm_server.reply_error(503, "overloaded")
    llm_server.reply_text("at last")
    assert llm.completion(USER).message.text == "at last"
    assert heard == ["attempt 1", "retry 1", "attempt 2", "retry 2", "attempt 3"]
