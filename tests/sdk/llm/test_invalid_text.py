"""What a model sends that is not valid text (JSON's lone-surrogate escapes, bytes that are
not UTF-8) comes out of the LLM repaired, on every path: never an error, never a crash."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from llm_server import Reply, ScriptedLLMServer, ToolCall

from ohtui.sdk import LLM, Message, TextContent
from ohtui.sdk.llm import LLMError
from ohtui.sdk.llm.streaming import LLMStreamChunk

FFFD = "\ufffd"
ASK = [Message(role="user", content=[TextContent(text="hi")])]
PATHS = {
    "direct": {"model": "openai/test-model"},
    "litellm": {"model": "test-model", "custom_llm_provider": "openai"},
}


def make_llm(base_url: str, path: str, **overrides: Any) -> LLM:
    settings = {"base_url": base_url, "api_key": "sk-test", "num_retries": 0, "timeout": 10}
    return LLM(**{**settings, **PATHS[path], **overrides})


def assert_valid(message: Message) -> None:
    message.model_dump_json()  # raises on a lone surrogate
    json.dumps(message.model_dump(mode="json"), ensure_ascii=False).encode("utf-8")


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("path", PATHS)
def test_lone_surrogates_in_an_answer_become_the_replacement_character(
    llm_server: ScriptedLLMServer, path: str, stream: bool
) -> None:
    call = ToolCall("fin\ud800ish", json.dumps({"message": "m\udfff"}), "c1")
    llm_server.reply(Reply(text="a\ud800b", reasoning="r\udc00", tool_calls=(call,)))
    seen: list[LLMStreamChunk] = []
    llm = make_llm(llm_server.base_url, path, stream=stream)
    message = llm.completion(ASK, on_token=seen.append).message
    assert_valid(message)
    assert message.text == f"a{FFFD}b"
    assert message.tool_calls and message.tool_calls[0].name == f"fin{FFFD}ish"
    if path == "direct":  # (litellm drops reasoning_content for a plain OpenAI model)
        assert message.reasoning_content == f"r{FFFD}"
    for chunk in seen:
        shown = [chunk.content, chunk.reasoning_content]
        shown += [t.arguments + (t.name or "") for t in chunk.tool_calls]
        "".join(shown).encode("utf-8")


def test_a_pair_split_between_two_deltas_joins_in_the_message(
    llm_server: ScriptedLLMServer,
) -> None:
    text = "a\ud83d\ude00b"  # 😀 as JSON escapes it, cut between its two halves
    llm_server.reply(Reply(text=text, chunks=("a\ud83d", "\ude00b")))
    seen: list[LLMStreamChunk] = []
    message = (
        make_llm(llm_server.base_url, "direct", stream=True)
        .completion(ASK, on_token=seen.append)
        .message
    )
    assert message.text == "a😀b"
    assert "".join(c.content for c in seen) == f"a{FFFD}{FFFD}b"  # each delta shown valid


def test_the_responses_api_too(llm_server: ScriptedLLMServer) -> None:
    llm_server.reply(Reply(text="x\ud800", reasoning="\udfff", tool_calls=()))
    llm = make_llm(llm_server.base_url, "direct", api_mode="responses")
    message = llm.responses(ASK).message
    assert_valid(message)
    assert message.text == f"x{FFFD}"


# --- bytes that are not UTF-8 -------------------------------------------------------------------

BAD = b"bad \xff\xfe\xc3 bytes"
WHOLE = (
    b'{"id":"c1","object":"chat.completion","created":0,"model":"test-model","choices":[{"index":0,'
    b'"message":{"role":"assistant","content":"' + BAD + b'"},"finish_reason":"stop"}],'
    b'"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}'
)
CHUNK = (
    b'{"id":"c1","object":"chat.completion.chunk","created":0,"model":"test-model","choices":'
    b'[{"index":0,"delta":{"role":"assistant","content":"' + BAD + b'"},"finish_reason":null}]}'
)
STREAMED = b"data: " + CHUNK + b"\n\n" + b"data: [DONE]\n\n"


class _BadBytes(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        streamed = bool(body.get("stream"))
        data = STREAMED if streamed else WHOLE
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream" if streamed else "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def bad_bytes_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _BadBytes)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_bytes_that_are_not_utf8_read_as_the_replacement_character(
    bad_bytes_server: str, stream: bool
) -> None:
    """An OpenAI-compatible server ('openai/<name>' and a base URL): ohtui reads it itself."""
    message = make_llm(bad_bytes_server, "direct", stream=stream).completion(ASK).message
    assert_valid(message)
    assert message.text.startswith("bad ") and message.text.endswith(" bytes")
    assert set(message.text[4:-6]) == {FFFD}


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_through_litellm_they_are_an_error_in_words(bad_bytes_server: str, stream: bool) -> None:
    """litellm's client cannot read them: the error says what happened (it said "Cannot
    reach ... check the base URL")."""
    with pytest.raises(LLMError) as caught:
        make_llm(bad_bytes_server, "litellm", stream=stream).completion(ASK)
    assert "answered with bytes that are not UTF-8 text" in str(caught.value)
    assert "Cannot reach" not in str(caught.value)
