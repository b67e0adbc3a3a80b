"""Token callbacks read each streamed delta as litellm's ModelResponseStream (`choices`,
`delta`, `function`), as SDK code does, or by ohtui's own fields, as ohtui's front ends do."""

from __future__ import annotations

import json

from llm_server import THINK_TOOLS, Reply, ScriptedLLMServer, ToolCall

from ohtui.sdk import LLM
from ohtui.sdk.llm.streaming import LLMStreamChunk, ModelResponseStream


def test_a_streamed_reply_reads_as_litellm_chunks(llm: LLM, llm_server: ScriptedLLMServer) -> None:
    llm_server.reply(
        Reply(
            text="Thinking it over.",
            reasoning="why not",
            tool_calls=(ToolCall("think", '{"thought": "streamed"}'),),
        )
    )
    chunks: list[ModelResponseStream] = []
    streaming = llm.model_copy(update={"stream": True})
    streaming.completion(
        [{"role": "user", "content": "go"}], tools=THINK_TOOLS, on_token=chunks.append
    )
    content, reasoning, names, arguments, finish = "", "", "", "", []
    for chunk in chunks:
        assert chunk.id == chunk.response_id and chunk.object == "chat.completion.chunk"
        for choice in chunk.choices:
            delta = choice.delta
            content += delta.content or ""
            reasoning += delta.reasoning_content or ""
            for call in delta.tool_calls or []:
                assert call.type == "function" and call.index == 0
                names += call.function.name or ""
                arguments += call.function.arguments
            finish += [choice.finish_reason] if choice.finish_reason else []
    assert content == "Thinking it over." and reasoning == "why not"
    assert names == "think" and json.loads(arguments) == {"thought": "streamed"}
    assert finish == ["tool_calls"]
    # ohtui's own reading of the same chunks agrees
    assert "".join(c.content for c in chunks) == content


def test_an_empty_chunk_has_no_choices_and_absent_fields_are_none() -> None:
    assert LLMStreamChunk(response_id="r").choices == []
    (choice,) = LLMStreamChunk(response_id="r", content="hi").choices
    assert choice.delta.reasoning_content is None and choice.delta.tool_calls is None
    assert choice.delta.content == "hi" and choice.finish_reason is None
