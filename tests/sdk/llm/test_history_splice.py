"""Providers reached through litellm: a long history is not handed to litellm on every call
(the turns it translated before are put back into the body on the way out), and the server
receives what litellm would have sent with the whole history; the warm-up rehearses the
first call without sending it."""

from __future__ import annotations

import json
from typing import Any

import pytest
from llm_server import THINK_TOOLS, Reply, ScriptedLLMServer, ToolCall

from ohtui.sdk import LLM
from ohtui.sdk.llm import history_splice
from ohtui.sdk.llm._litellm import litellm
from ohtui.sdk.llm.warm_up import warm_up
from ohtui.sdk.llm.wire import EncodedMessage

MODELS = ("hosted_vllm/test-model", "anthropic/claude-sonnet-4-5")


def make_llm(server: ScriptedLLMServer, model: str, **overrides: Any) -> LLM:
    base = server.base_url.removesuffix("/v1") if model.startswith("anthropic/") else None
    settings: dict[str, Any] = {
        "model": model,
        "base_url": base or server.base_url,
        "api_key": "sk-test",
        "num_retries": 0,
        "timeout": 10,
    }
    return LLM(**{**settings, **overrides})


def grow(history: list[Any], step: int, call_id: str) -> None:
    """One agent step: an assistant tool call and its result (and now and then a user word)."""
    call = {"id": call_id, "type": "function", "function": {"name": "think", "arguments": "{}"}}
    history.append(EncodedMessage({"role": "assistant", "content": None, "tool_calls": [call]}))
    history.append(
        EncodedMessage(
            {"role": "tool", "tool_call_id": call_id, "name": "think", "content": f"ok {step}"}
        )
    )
    if step % 3 == 2:
        history.append(EncodedMessage({"role": "user", "content": f"go on ({step}) ünï"}))


@pytest.fixture(autouse=True)
def fresh_splicers() -> None:
    history_splice._splicers.clear()


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("model", MODELS)
def test_litellm_gets_only_new_turns_and_the_server_gets_the_whole_history(
    llm_server: ScriptedLLMServer, model: str, stream: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    llm_server.set_default(Reply(tool_calls=(ToolCall("think", "{}"),)))
    given: list[int] = []
    module = litellm()
    real = module.completion

    def counting(**request: Any) -> Any:
        given.append(len(request["messages"]))
        return real(**request)

    monkeypatch.setattr(module, "completion", counting)
    llm = make_llm(llm_server, model, stream=stream)
    history: list[Any] = [
        EncodedMessage({"role": "system", "content": "You are terse."}),
        EncodedMessage({"role": "user", "content": "Think a lot."}),
    ]
    for step in range(8):
        answer = llm.completion(history, tools=THINK_TOOLS)
        assert answer.message.tool_calls
        spliced = llm_server.requests[-1]
        # The same request with the whole history, litellm translating all of it.
        llm.completion([dict(m) for m in history], tools=THINK_TOOLS)
        assert spliced == llm_server.requests[-1]
        grow(history, step, f"c{step}")
    # litellm was given the head and the newest turns, never the whole history again.
    spliced_sizes = given[-2::-2][:3]
    # (Claude's newest turns carry the cache marks: the two newest are translated again.)
    assert max(spliced_sizes) <= 8 < len(history) - 6
    assert len(llm_server.requests[-1]["messages"]) >= 15


def test_a_changed_turn_is_translated_again(llm_server: ScriptedLLMServer) -> None:
    llm_server.set_default(Reply(text="ok"))
    llm = make_llm(llm_server, "hosted_vllm/test-model")
    history: list[Any] = [EncodedMessage({"role": "user", "content": "hi"})]
    for step in range(4):
        grow(history, step, f"c{step}")
    llm.completion(history)
    history[3] = EncodedMessage({**history[3], "content": "changed"})  # a tool result
    llm.completion(history)
    assert llm_server.requests[-1]["messages"][3]["content"] == "changed"
    llm.completion([dict(m) for m in history])  # litellm translating the whole history
    assert llm_server.requests[-2] == llm_server.requests[-1]


def test_a_body_that_does_not_split_into_turns_is_sent_whole(
    llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    llm_server.set_default(Reply(text="ok"))
    llm = make_llm(llm_server, "hosted_vllm/test-model")
    history: list[Any] = [EncodedMessage({"role": "user", "content": "hi"})]
    for step in range(4):
        grow(history, step, f"c{step}")
    llm.completion(history)
    grow(history, 4, "c4")
    monkeypatch.setattr(history_splice, "split_turns", _one_turn_less(history_splice.split_turns))
    llm.completion(history)
    assert len(llm_server.requests) == 2  # nothing was sent of the mismatched request
    monkeypatch.undo()
    llm.completion([dict(m) for m in history])  # litellm translating the whole history
    assert llm_server.requests[-2] == llm_server.requests[-1]


def _one_turn_less(split: Any) -> Any:
    def split_turns(messages: Any, **kwargs: Any) -> Any:
        head, turns = split(messages, **kwargs)
        # The caller's history (EncodedMessages) is split truly; litellm's body (plain dicts
        # read from the request) then seems a turn short.
        if all(isinstance(m, EncodedMessage) for m in messages):
            return head, turns
        return head, turns[:-1]

    return split_turns


@pytest.mark.parametrize("model", MODELS)
def test_warm_up_rehearses_the_first_call_without_sending_it(
    llm_server: ScriptedLLMServer, model: str
) -> None:
    llm = make_llm(llm_server, model, stream=True)
    history_splice._client.clear()
    warm_up(llm)
    assert llm_server.requests == []
    assert history_splice._client  # litellm's HTTP client made, ready for the first call
    llm_server.reply_text("warm")
    assert llm.completion([{"role": "user", "content": "hi"}]).message.text == "warm"
    assert json.dumps(llm_server.requests[-1]).count("hi") == 1


def test_a_streamed_answer_through_litellm_loads_no_tokenizer(
    llm_server: ScriptedLLMServer,
) -> None:
    module = litellm()
    encoding = module.main._encoding_cache
    encoding._real = None  # as if no token had been counted in this process
    llm_server.reply_text("counted nowhere")
    llm = make_llm(llm_server, "anthropic/claude-sonnet-4-5", stream=True)
    history = [{"role": "user", "content": "hi " * 500}]
    assert llm.completion(history).message.text == "counted nowhere"
    # litellm priced nothing (its pricing counted the request's tokens to do so), and its
    # tokenizer (40 MB) was never loaded; ours is the price from the answer's usage.
    assert encoding._real is None
    assert llm.metrics.accumulated_cost > 0


@pytest.mark.parametrize("model", MODELS)
def test_the_spliced_body_is_byte_for_byte_what_litellm_sends(
    llm_server: ScriptedLLMServer, model: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import httpx

    llm_server.set_default(Reply(tool_calls=(ToolCall("think", "{}"),)))
    sent: list[bytes] = []
    real_send = httpx.Client.send

    def recording(self: httpx.Client, request: httpx.Request, **kwargs: Any) -> httpx.Response:
        response = real_send(self, request, **kwargs)
        sent.append(request.read())
        return response

    monkeypatch.setattr(httpx.Client, "send", recording)
    llm = make_llm(llm_server, model)
    history: list[Any] = [
        EncodedMessage({"role": "system", "content": "You are terse. ünï"}),
        EncodedMessage({"role": "user", "content": "Think a lot."}),
    ]
    for step in range(5):
        grow(history, step, f"c{step}")
        llm.completion(history, tools=THINK_TOOLS)
        spliced = sent[-1]
        llm.completion([dict(m) for m in history], tools=THINK_TOOLS)
        assert spliced == sent[-1]
    assert len(json.loads(spliced)["messages"]) >= 10  # the whole history went out
