"""The LLM's `caching_prompt` and `native_tool_calling` options, over real HTTP against the
scripted server (and in a whole conversation for tools written in the text)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from llm_server import ScriptedLLMServer

from ohtui.sdk import LLM, Agent, Conversation, ConversationExecutionStatus
from ohtui.sdk.event import ObservationEvent
from ohtui.sdk.llm import LLMCallContext, Message, MessageToolCall, TextContent
from ohtui.sdk.llm.prompt_cache import mark_cache_points, needs_cache_marks
from ohtui.sdk.llm.prompted_tools import parse_answer, to_prompted

MARK = {"type": "ephemeral"}
SYSTEM = Message(role="system", content=[TextContent(text="You are a helper.")])
USER = Message(role="user", content=[TextContent(text="Read a.txt.")])
READ_FILE: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "read_file",
        "description": "Read a file.",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
    },
}


def make_llm(server: ScriptedLLMServer, model: str = "openai/test-model", **options: Any) -> LLM:
    return LLM(model=model, base_url=server.base_url, api_key="sk-test", num_retries=0, **options)


def marked(message: dict[str, Any]) -> bool:
    content = message["content"]
    return isinstance(content, list) and content[-1].get("cache_control") == MARK


# ------------------------------------------------------------------ caching_prompt


def test_both_options_default_on_and_are_copied() -> None:
    llm = LLM(model="openai/gpt-4o")
    assert llm.caching_prompt is True and llm.native_tool_calling is True
    copy = llm.model_copy(update={"usage_id": "other"})
    assert copy.caching_prompt is True and copy.native_tool_calling is True
    off = LLM(model="openai/gpt-4o", caching_prompt=False, native_tool_calling=False)
    copy = off.model_copy(update={"usage_id": "other"})
    assert copy.caching_prompt is False and copy.native_tool_calling is False
    assert LLM.model_validate_json(off.model_dump_json()).native_tool_calling is False


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("anthropic/claude-sonnet-4-5", True),
        ("bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0", True),
        ("openrouter/anthropic/claude-opus-4", True),
        ("claude-2.1", False),
        ("openai/gpt-4o", False),
        ("gemini/gemini-2.5-pro", False),
    ],
)
def test_only_claude_models_need_cache_marks(model: str, expected: bool) -> None:
    assert needs_cache_marks(model) is expected
    assert LLM(model=model).is_caching_prompt_active() is expected
    assert LLM(model=model, caching_prompt=False).is_caching_prompt_active() is False


def test_marks_go_on_the_system_prompt_and_the_newest_user_or_tool_message() -> None:
    chat: list[dict[str, Any]] = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1"}]},
        {"role": "tool", "tool_call_id": "c1", "content": "result"},
        {"role": "assistant", "content": "done"},
    ]
    original = json.dumps(chat)
    out = mark_cache_points(chat)
    assert json.dumps(chat) == original  # the caller's (cached) dicts are never changed
    assert [marked(m) if m["content"] else False for m in out] == [
        True,
        False,
        False,
        True,
        False,
    ]
    assert out[3]["content"] == [{"type": "text", "text": "result", "cache_control": MARK}]
    assert out[3]["tool_call_id"] == "c1"
    images = [{"type": "text", "text": "see"}, {"type": "image_url", "image_url": {"url": "u"}}]
    out = mark_cache_points([{"role": "user", "content": images}])
    assert out[0]["content"][0] == {"type": "text", "text": "see"}
    assert out[0]["content"][1]["cache_control"] == MARK


def test_a_claude_request_carries_the_cache_marks(llm_server: ScriptedLLMServer) -> None:
    llm_server.reply_text("hi")
    llm = make_llm(llm_server, model="openai/claude-sonnet-4-5")
    assert llm.completion([SYSTEM, USER]).message.text == "hi"
    system, user = llm_server.requests[0]["messages"]
    assert system["content"] == [
        {"type": "text", "text": "You are a helper.", "cache_control": MARK}
    ]
    assert marked(user)


def test_caching_prompt_off_sends_no_marks_and_no_cache_key(
    llm_server: ScriptedLLMServer,
) -> None:
    llm_server.reply_text("hi")
    llm = make_llm(llm_server, model="openai/claude-sonnet-4-5", caching_prompt=False)
    llm.completion([SYSTEM, USER])
    assert llm_server.requests[0]["messages"][0]["content"] == "You are a helper."
    assert llm_server.requests[0]["messages"][1]["content"] == "Read a.txt."
    # OpenAI's own cache is keyed by conversation only while caching is on.
    on, off = LLM(model="openai/gpt-4o"), LLM(model="openai/gpt-4o", caching_prompt=False)
    context = LLMCallContext(prompt_cache_key="conv-1")
    assert on._request(None, context, {})["prompt_cache_key"] == "conv-1"
    assert "prompt_cache_key" not in off._request(None, context, {})


def test_other_models_get_no_marks(llm_server: ScriptedLLMServer) -> None:
    llm_server.reply_text("hi")
    make_llm(llm_server).completion([SYSTEM, USER])
    assert llm_server.requests[0]["messages"][0]["content"] == "You are a helper."


# ------------------------------------------------------------------ native_tool_calling


def test_tools_in_the_prompt_and_calls_read_from_the_text(
    llm_server: ScriptedLLMServer,
) -> None:
    call = '{"name": "read_file", "arguments": {"path": "a.txt"}}'
    llm_server.reply_text(f"I will read it.\n<tool_call>\n{call}\n</tool_call>")
    llm = make_llm(llm_server, native_tool_calling=False)
    response = llm.completion([SYSTEM, USER], tools=[READ_FILE])
    body = llm_server.requests[0]
    assert "tools" not in body
    system = body["messages"][0]["content"]
    assert system.startswith("You are a helper.") and '"name": "read_file"' in system
    assert response.message.text == "I will read it."
    (tool_call,) = response.message.tool_calls or []
    assert tool_call.name == "read_file"
    assert json.loads(tool_call.arguments) == {"path": "a.txt"}
    assert tool_call.id.startswith("call_")


def test_streamed_answers_are_parsed_too(llm_server: ScriptedLLMServer) -> None:
    call = '{"name": "read_file", "arguments": {"path": "b.txt"}}'
    llm_server.reply_text(f"<tool_call>{call}</tool_call>")
    chunks: list[str] = []
    llm = make_llm(llm_server, native_tool_calling=False, stream=True)
    response = llm.completion(
        [USER], tools=[READ_FILE], on_token=lambda c: chunks.append(c.content or "")
    )
    assert "".join(chunks)  # the text streamed as it came
    assert response.message.text == ""
    assert [tc.name for tc in response.message.tool_calls or []] == ["read_file"]


def test_native_tool_calling_still_sends_tools(llm_server: ScriptedLLMServer) -> None:
    llm_server.reply_tool_call("read_file", {"path": "a.txt"})
    response = make_llm(llm_server).completion([USER], tools=[READ_FILE])
    assert llm_server.requests[0]["tools"][0]["function"]["name"] == "read_file"
    assert response.message.tool_calls and response.message.tool_calls[0].name == "read_file"


def test_the_history_is_rewritten_into_the_same_format() -> None:
    call = MessageToolCall(id="c1", name="read_file", arguments='{"path": "a.txt"}')
    history = [
        Message(role="assistant", content=[TextContent(text="Reading.")], tool_calls=[call]),
        Message(role="tool", content=[TextContent(text="hello")], tool_call_id="c1", name="rf"),
    ]
    out = to_prompted([m.to_chat_dict() for m in history], [READ_FILE])
    assert out[0]["role"] == "system" and "read_file" in out[0]["content"]
    assert "tool_calls" not in out[1]
    assert out[1]["content"].startswith("Reading.\n<tool_call>\n")
    text, calls = parse_answer(out[1]["content"])
    assert text == "Reading." and calls[0]["function"]["name"] == "read_file"
    assert out[2] == {
        "role": "user",
        "content": '<tool_result name="rf" id="c1">\nhello\n</tool_result>',
    }


@pytest.mark.parametrize(
    "block",
    ["<tool_call>not json</tool_call>", '<tool_call>{"arguments": {}}</tool_call>'],
)
def test_a_malformed_block_stays_in_the_text(block: str) -> None:
    text, calls = parse_answer(f"Trying. {block}")
    assert calls == [] and text == f"Trying. {block}"


def test_a_conversation_runs_tools_without_native_tool_calling(
    llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    think = '{"name": "think", "arguments": {"thought": "plan the work"}}'
    finish = '{"name": "finish", "arguments": {"message": "All done."}}'
    llm_server.reply_text(f"<tool_call>\n{think}\n</tool_call>")
    llm_server.reply_text(f"<tool_call>\n{finish}\n</tool_call>")
    agent = Agent(llm=make_llm(llm_server, native_tool_calling=False), tools=[])
    conversation = Conversation(agent=agent, workspace=tmp_path, visualizer=None)
    conversation.send_message("Plan, then finish.")
    conversation.run()
    assert conversation.state.execution_status is ConversationExecutionStatus.FINISHED
    observed = [e.tool_name for e in conversation.state.events if isinstance(e, ObservationEvent)]
    assert observed == ["think", "finish"]
    second = llm_server.requests[1]
    assert "tools" not in second
    roles = [m["role"] for m in second["messages"]]
    assert "tool" not in roles  # the think result came back as a user message
    assert "<tool_result" in second["messages"][-1]["content"]
    conversation.close()
