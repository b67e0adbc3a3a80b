"""Tests of the scripted LLM server, driven through litellm over real HTTP."""

from __future__ import annotations

import asyncio
import json
import os
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # before litellm is imported

import litellm
import pytest
from llm_server import CONTEXT_WINDOW_MESSAGE, MODEL_NAME, Reply, ScriptedLLMServer

litellm.suppress_debug_info = True

MESSAGES = [{"role": "user", "content": "hi"}]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a file.",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
        },
    }
]


def complete(server: ScriptedLLMServer, **kwargs: Any) -> Any:
    """Call litellm.completion against the server, without any retries."""
    params: dict[str, Any] = {
        "model": f"openai/{MODEL_NAME}",
        "api_base": server.base_url,
        "api_key": "sk-test",
        "messages": MESSAGES,
        "max_retries": 0,
        "num_retries": 0,
    }
    params.update(kwargs)
    return litellm.completion(**params)


def stream(server: ScriptedLLMServer, **kwargs: Any) -> list[Any]:
    """Stream a completion from the server and return all chunks."""
    return list(complete(server, stream=True, **kwargs))


def content_deltas(chunks: list[Any]) -> list[str]:
    """The non-empty content deltas of streamed chunks."""
    return [c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content]


def streamed_tool_calls(chunks: list[Any]) -> list[dict[str, str]]:
    """Reassemble streamed tool-call deltas by index into {id, name, arguments}."""
    calls: dict[int, dict[str, str]] = {}
    for chunk in chunks:
        for delta in (chunk.choices and chunk.choices[0].delta.tool_calls) or []:
            call = calls.setdefault(delta.index, {"id": "", "name": "", "arguments": ""})
            call["id"] = delta.id or call["id"]
            call["name"] += delta.function.name or ""
            call["arguments"] += delta.function.arguments or ""
    return [calls[i] for i in sorted(calls)]


def finish_reasons(chunks: list[Any]) -> list[str]:
    """The finish reasons reported in streamed chunks."""
    return [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]


# ---------------------------------------------------------------------- text


def test_text_reply(llm_server: ScriptedLLMServer) -> None:
    """A scripted text comes back as a full chat.completion with estimated usage."""
    llm_server.reply_text("Hello, world!")
    response = complete(llm_server)
    choice = response.choices[0]
    assert choice.message.content == "Hello, world!"
    assert choice.message.tool_calls is None
    assert choice.finish_reason == "stop"
    assert response.id == "chatcmpl-1"
    assert response.model == MODEL_NAME
    prompt_estimate = len(json.dumps(MESSAGES)) // 4
    assert response.usage.prompt_tokens == prompt_estimate
    assert response.usage.completion_tokens == len("Hello, world!") // 4 + 1
    assert response.usage.total_tokens == prompt_estimate + len("Hello, world!") // 4 + 1
    assert llm_server.pending() == 0


def test_scripted_usage_with_details(llm_server: ScriptedLLMServer) -> None:
    """Scripted usage, with cached and reasoning token details, reaches litellm."""
    llm_server.reply_text(
        "ok",
        usage={
            "prompt_tokens": 100,
            "completion_tokens": 20,
            "prompt_tokens_details": {"cached_tokens": 60},
            "completion_tokens_details": {"reasoning_tokens": 15},
        },
    )
    usage = complete(llm_server).usage
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (100, 20, 120)
    assert usage.prompt_tokens_details.cached_tokens == 60
    assert usage.completion_tokens_details.reasoning_tokens == 15


def test_replies_are_consumed_in_order(llm_server: ScriptedLLMServer) -> None:
    """Each request consumes the next scripted reply."""
    llm_server.reply_text("first")
    llm_server.reply_text("second")
    assert llm_server.pending() == 2
    assert complete(llm_server).choices[0].message.content == "first"
    assert llm_server.pending() == 1
    assert complete(llm_server).choices[0].message.content == "second"
    assert llm_server.pending() == 0


def test_finish_reason_override(llm_server: ScriptedLLMServer) -> None:
    """A scripted finish reason (e.g. truncation) is reported as is."""
    llm_server.reply_text("cut o", finish_reason="length")
    assert complete(llm_server).choices[0].finish_reason == "length"


def test_streaming_text_and_usage(llm_server: ScriptedLLMServer) -> None:
    """Streamed deltas join to the text exactly and usage arrives when asked for."""
    text = "  The quick brown fox\njumps over  the lazy dog. "
    llm_server.reply_text(text, usage={"prompt_tokens": 42, "completion_tokens": 7})
    chunks = stream(llm_server, stream_options={"include_usage": True})
    deltas = content_deltas(chunks)
    assert len(deltas) > 5
    assert "".join(deltas) == text
    assert finish_reasons(chunks) == ["stop"]
    usages = [c.usage for c in chunks if getattr(c, "usage", None)]
    assert usages, "no usage chunk"
    assert (usages[-1].prompt_tokens, usages[-1].completion_tokens) == (42, 7)
    assert usages[-1].total_tokens == 49
    assert llm_server.requests[0]["stream_options"] == {"include_usage": True}


def test_streaming_without_include_usage_sends_no_usage_chunk(
    llm_server: ScriptedLLMServer,
) -> None:
    """Without stream_options.include_usage the server sends no usage chunk."""
    llm_server.reply_text("a b c", usage={"prompt_tokens": 42, "completion_tokens": 7})
    chunks = stream(llm_server)
    assert "".join(content_deltas(chunks)) == "a b c"
    assert not any(getattr(c, "usage", None) and c.usage.prompt_tokens == 42 for c in chunks)


def test_streaming_explicit_chunks_with_delay(llm_server: ScriptedLLMServer) -> None:
    """Explicit chunks are streamed one by one, chunk_delay apart."""
    llm_server.reply_text("Hello world", chunks=["Hel", "lo w", "orld"], chunk_delay=0.05)
    started = time.monotonic()
    deltas = content_deltas(stream(llm_server))
    assert deltas == ["Hel", "lo w", "orld"]
    assert time.monotonic() - started >= 0.15  # role + 3 text + finish chunks: 4 gaps of 0.05 s


def test_chunks_must_join_to_text() -> None:
    """A Reply whose chunks do not reassemble its text is rejected."""
    with pytest.raises(ValueError, match="join"):
        Reply(text="abc", chunks=("a", "b"))


def test_async_streaming(llm_server: ScriptedLLMServer) -> None:
    """litellm.acompletion streams from the server as well."""
    llm_server.reply_text("async works fine")

    async def run() -> list[str]:
        response = await litellm.acompletion(
            model=f"openai/{MODEL_NAME}",
            api_base=llm_server.base_url,
            api_key="sk-test",
            messages=MESSAGES,
            stream=True,
            max_retries=0,
        )
        return [c.choices[0].delta.content async for c in response if c.choices[0].delta.content]

    assert "".join(asyncio.run(run())) == "async works fine"


# ---------------------------------------------------------------- reasoning


def test_reasoning_content(llm_server: ScriptedLLMServer) -> None:
    """Reasoning is returned as message.reasoning_content."""
    llm_server.reply_text("42", reasoning="Let me think step by step.")
    message = complete(llm_server).choices[0].message
    assert message.content == "42"
    assert message.reasoning_content == "Let me think step by step."


def test_streaming_reasoning_content(llm_server: ScriptedLLMServer) -> None:
    """Reasoning is streamed as delta.reasoning_content before the text."""
    llm_server.reply_text("42", reasoning="Let me think step by step.")
    chunks = stream(llm_server)
    reasoning = [
        c.choices[0].delta.reasoning_content
        for c in chunks
        if c.choices and getattr(c.choices[0].delta, "reasoning_content", None)
    ]
    assert len(reasoning) > 1
    assert "".join(reasoning) == "Let me think step by step."
    assert "".join(content_deltas(chunks)) == "42"


# --------------------------------------------------------------- tool calls
# The server answers tool calls whatever the request holds, so these tests send no `tools`
# (see test_requests_are_recorded for why sending them needs care with litellm 1.106).


def test_tool_call(llm_server: ScriptedLLMServer) -> None:
    """One tool call: content None, finish_reason tool_calls, JSON arguments."""
    llm_server.reply_tool_call("read_file", {"path": "a.txt"}, call_id="call_abc")
    choice = complete(llm_server).choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content is None
    [call] = choice.message.tool_calls
    assert call.id == "call_abc"
    assert call.type == "function"
    assert call.function.name == "read_file"
    assert json.loads(call.function.arguments) == {"path": "a.txt"}


def test_several_tool_calls_with_text(llm_server: ScriptedLLMServer) -> None:
    """Parallel tool calls keep their order and get distinct ids."""
    llm_server.reply_tool_calls(
        [("read_file", {"path": "a"}), ("run", {"cmd": "ls -la", "timeout": 5})],
        text="Let me look.",
    )
    message = complete(llm_server).choices[0].message
    assert message.content == "Let me look."
    assert [c.function.name for c in message.tool_calls] == ["read_file", "run"]
    assert [json.loads(c.function.arguments) for c in message.tool_calls] == [
        {"path": "a"},
        {"cmd": "ls -la", "timeout": 5},
    ]
    assert len({c.id for c in message.tool_calls}) == 2


def test_streaming_tool_calls(llm_server: ScriptedLLMServer) -> None:
    """Streamed tool calls reassemble to the scripted names, ids and arguments."""
    first = {"path": "src/main.py", "lines": [1, 2, 3]}
    second = {"cmd": "echo 'hi there'"}
    llm_server.reply_tool_calls([("read_file", first), ("run", second)], text="Working on it.")
    chunks = stream(llm_server)
    calls = streamed_tool_calls(chunks)
    assert [c["name"] for c in calls] == ["read_file", "run"]
    assert [json.loads(c["arguments"]) for c in calls] == [first, second]
    assert all(c["id"] for c in calls)
    assert "".join(content_deltas(chunks)) == "Working on it."
    assert finish_reasons(chunks) == ["tool_calls"]
    argument_deltas = [
        d
        for c in chunks
        if c.choices
        for d in c.choices[0].delta.tool_calls or []
        if d.function.arguments
    ]
    assert len(argument_deltas) >= 4  # each call's arguments arrive in pieces


def test_stream_chunk_builder_rebuilds_tool_call(llm_server: ScriptedLLMServer) -> None:
    """litellm.stream_chunk_builder turns the streamed chunks back into one message."""
    llm_server.reply_tool_call("read_file", {"path": "x.py"}, call_id="call_1")
    response = litellm.stream_chunk_builder(stream(llm_server))
    [call] = response.choices[0].message.tool_calls
    assert (call.id, call.function.name) == ("call_1", "read_file")
    assert json.loads(call.function.arguments) == {"path": "x.py"}


@pytest.mark.parametrize("streaming", [False, True], ids=["plain", "stream"])
def test_malformed_arguments_pass_through(llm_server: ScriptedLLMServer, streaming: bool) -> None:
    """String arguments are sent verbatim, even when they are not valid JSON."""
    raw = '{"path": "a.txt", "mode": '
    llm_server.reply_tool_call("read_file", raw)
    if streaming:
        [call] = streamed_tool_calls(stream(llm_server))
        assert call["arguments"] == raw
    else:
        [call] = complete(llm_server).choices[0].message.tool_calls
        assert call.function.arguments == raw


# -------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("status", "message", "code", "expected"),
    [
        (401, "Incorrect API key provided.", "invalid_api_key", litellm.AuthenticationError),
        (429, "Rate limit reached.", "rate_limit_exceeded", litellm.RateLimitError),
        (500, None, None, litellm.InternalServerError),
        (503, None, None, litellm.ServiceUnavailableError),
        (400, None, None, litellm.BadRequestError),
        (404, None, "model_not_found", litellm.NotFoundError),
        (
            400,
            CONTEXT_WINDOW_MESSAGE.format(limit=8192, used=9000),
            "context_length_exceeded",
            litellm.ContextWindowExceededError,
        ),
    ],
    ids=["401", "429", "500", "503", "400", "404", "context-window"],
)
def test_error_mapping(
    llm_server: ScriptedLLMServer,
    status: int,
    message: str | None,
    code: str | None,
    expected: type[Exception],
) -> None:
    """Each scripted HTTP error maps to the matching litellm exception, without retries."""
    llm_server.reply_error(status, message, code=code)
    with pytest.raises(expected) as info:
        complete(llm_server)
    assert info.value.status_code == status
    if message:
        assert message in str(info.value)
    assert len(llm_server.requests) == 1


def test_plain_400_is_not_a_context_window_error(llm_server: ScriptedLLMServer) -> None:
    """A plain 400 is a BadRequestError but not a ContextWindowExceededError."""
    llm_server.reply_error(400, "Invalid value for 'temperature'.")
    with pytest.raises(litellm.BadRequestError) as info:
        complete(llm_server)
    assert not isinstance(info.value, litellm.ContextWindowExceededError)


def test_context_window_error_helper(llm_server: ScriptedLLMServer) -> None:
    """reply_context_window_error scripts OpenAI's context-length error."""
    llm_server.reply_context_window_error(limit=1000, used=1500)
    with pytest.raises(litellm.ContextWindowExceededError, match="1000 tokens"):
        complete(llm_server, stream=True)


def test_retry_after_header(llm_server: ScriptedLLMServer) -> None:
    """Scripted headers are sent; litellm exposes them as litellm_response_headers."""
    llm_server.reply_error(429, headers={"Retry-After": "7"})
    with pytest.raises(litellm.RateLimitError) as info:
        complete(llm_server)
    assert info.value.litellm_response_headers["retry-after"] == "7"


def test_delay_triggers_litellm_timeout(llm_server: ScriptedLLMServer) -> None:
    """A reply delayed past the client timeout raises litellm.Timeout."""
    llm_server.reply_text("too late", delay=5)
    started = time.monotonic()
    with pytest.raises(litellm.Timeout):
        complete(llm_server, timeout=0.5)
    assert time.monotonic() - started < 3
    assert len(llm_server.requests) == 1  # not retried


def test_empty_script_fails_loudly(llm_server: ScriptedLLMServer) -> None:
    """A request with no reply left is a 400 naming the request number."""
    llm_server.reply_text("only one")
    complete(llm_server)
    with pytest.raises(litellm.BadRequestError, match=r"no reply left for request #2"):
        complete(llm_server, max_retries=2)
    assert len(llm_server.requests) == 2  # x-should-retry: false stops the SDK retrying


def test_failing_reply_function_is_reported(llm_server: ScriptedLLMServer) -> None:
    """An exception in a reply function becomes a 500 with its message."""

    def broken(body: dict[str, Any]) -> Reply:
        raise KeyError("no such thing")

    llm_server.reply_with(broken)
    with pytest.raises(litellm.InternalServerError, match="reply function failed"):
        complete(llm_server, max_retries=2)
    assert len(llm_server.requests) == 1


# ------------------------------------------------- recording, defaults, dynamic


def test_requests_are_recorded(llm_server: ScriptedLLMServer) -> None:
    """The server records each request body (messages, tools, options) in order."""
    llm_server.reply_text("one")
    llm_server.reply_text("two")
    # litellm 1.106's completion(tools=...) imports its MCP gateway, which needs the optional
    # `mcp` package (litellm[mcp]); _skip_mcp_handler skips that import.
    complete(llm_server, tools=TOOLS, temperature=0.25, _skip_mcp_handler=True)
    complete(llm_server, messages=[{"role": "user", "content": "second"}])
    first, second = llm_server.requests
    assert first["model"] == MODEL_NAME
    assert first["messages"] == MESSAGES
    assert first["tools"] == TOOLS
    assert first["temperature"] == 0.25
    assert second["messages"] == [{"role": "user", "content": "second"}]
    assert llm_server.request_headers[0]["authorization"] == "Bearer sk-test"


def test_set_default_replies_forever(llm_server: ScriptedLLMServer) -> None:
    """With a default, requests beyond the script keep being answered."""
    llm_server.reply_text("scripted")
    llm_server.set_default(Reply(text="default"))
    answers = [complete(llm_server).choices[0].message.content for _ in range(5)]
    assert answers == ["scripted"] + ["default"] * 4
    assert llm_server.pending() == 0
    llm_server.set_default(None)
    with pytest.raises(litellm.BadRequestError, match="no reply left for request #6"):
        complete(llm_server)


def test_reply_with_computes_from_request(llm_server: ScriptedLLMServer) -> None:
    """reply_with and a callable default build replies from the request body."""

    def echo(body: dict[str, Any]) -> Reply:
        return Reply(text="echo: " + body["messages"][-1]["content"])

    llm_server.reply_with(lambda body: Reply(text=f"{len(body['messages'])} messages"))
    llm_server.set_default(echo)
    assert complete(llm_server).choices[0].message.content == "1 messages"
    answer = complete(llm_server, messages=[{"role": "user", "content": "ping"}])
    assert answer.choices[0].message.content == "echo: ping"


def test_concurrent_requests_are_each_answered(llm_server: ScriptedLLMServer) -> None:
    """Requests in flight at the same time are served concurrently, each answered."""
    parties = 6
    barrier = threading.Barrier(parties)

    def echo_when_all_arrived(body: dict[str, Any]) -> Reply:
        barrier.wait(timeout=10)  # raises (-> HTTP 500) unless all requests are in flight
        return Reply(text="echo " + body["messages"][-1]["content"])

    llm_server.set_default(echo_when_all_arrived)

    def ask(i: int) -> str:
        messages = [{"role": "user", "content": str(i)}]
        return complete(llm_server, messages=messages).choices[0].message.content

    with ThreadPoolExecutor(parties) as pool:
        answers = list(pool.map(ask, range(parties)))
    assert answers == [f"echo {i}" for i in range(parties)]
    assert len(llm_server.requests) == parties


# ------------------------------------------------------------- raw HTTP / life


def _get_json(url: str) -> tuple[int, dict[str, Any]]:
    """GET a URL and return its status and JSON body (also for HTTP errors)."""
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


def test_models_route_and_unknown_route(llm_server: ScriptedLLMServer) -> None:
    """GET /v1/models lists test-model; unknown routes are 404 with an error body."""
    status, body = _get_json(f"{llm_server.base_url}/models")
    assert status == 200
    assert [m["id"] for m in body["data"]] == [MODEL_NAME]
    status, body = _get_json(f"{llm_server.base_url}/nope")
    assert status == 404
    assert "unknown route" in body["error"]["message"]
    assert llm_server.requests == []


def test_route_without_v1_prefix(llm_server: ScriptedLLMServer) -> None:
    """POST /chat/completions (api_base without /v1) is served too."""
    llm_server.reply_text("no prefix")
    api_base = llm_server.base_url.removesuffix("/v1")
    response = complete(llm_server, api_base=api_base)
    assert response.choices[0].message.content == "no prefix"


def test_close_is_prompt_with_request_in_flight() -> None:
    """close() returns quickly even while a delayed reply and keep-alive are pending."""
    server = ScriptedLLMServer()
    server.reply_text("ok")
    server.reply_text("slow", delay=30)
    complete(server)  # leaves an idle keep-alive connection
    errors: list[Exception] = []

    def slow_request() -> None:
        try:
            complete(server)
        except Exception as exc:
            errors.append(exc)

    worker = threading.Thread(target=slow_request)
    worker.start()
    deadline = time.monotonic() + 5
    while len(server.requests) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    started = time.monotonic()
    server.close()
    assert time.monotonic() - started < 2
    worker.join(timeout=5)
    assert not worker.is_alive()
    # dropped, not answered (litellm reports the openai SDK's APIConnectionError this way)
    assert isinstance(errors[0], litellm.InternalServerError)
    assert "Connection error" in str(errors[0])
    server.close()  # idempotent
