"""Routers: MultimodalRouter sends images to the primary LLM, text to the secondary."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from llm_server import ScriptedLLMServer
from pydantic import ValidationError

from ohtui.sdk import LLM, Agent, Conversation
from ohtui.sdk.llm import ImageContent, Message, TextContent
from ohtui.sdk.llm.router import MultimodalRouter, RandomRouter

PNG = (
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"
    "+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


@pytest.fixture
def second_server() -> Iterator[ScriptedLLMServer]:
    server = ScriptedLLMServer()
    try:
        yield server
    finally:
        server.close()


def routed(server: ScriptedLLMServer, usage_id: str) -> LLM:
    return LLM(model="openai/gpt-4o", base_url=server.base_url, num_retries=0, usage_id=usage_id)


def test_images_go_to_the_primary_and_text_to_the_secondary(
    llm_server: ScriptedLLMServer, second_server: ScriptedLLMServer
) -> None:
    router = MultimodalRouter(
        usage_id="router",
        llms_for_routing={
            "primary": routed(llm_server, "primary"),
            "secondary": routed(second_server, "secondary"),
        },
    )
    second_server.reply_text("text answer")
    llm_server.reply_text("image answer")

    text = router.completion([Message(role="user", content=[TextContent(text="hi")])])
    image = router.completion(
        [
            Message(
                role="user",
                content=[TextContent(text="what is this?"), ImageContent(image_urls=[PNG])],
            )
        ]
    )

    assert (text.message.text, image.message.text) == ("text answer", "image answer")
    assert len(llm_server.requests) == len(second_server.requests) == 1
    assert router.active_llm is router.llms_for_routing["primary"]
    assert router.model == "multimodal_router"
    assert router.llms_for_routing["secondary"].metrics.call_count == 1


def test_a_conversation_counts_the_routed_llms_under_their_own_usage_ids(
    llm_server: ScriptedLLMServer, second_server: ScriptedLLMServer, workspace: Path
) -> None:
    router = MultimodalRouter(
        usage_id="router",
        llms_for_routing={
            "primary": routed(llm_server, "agent-primary"),
            "secondary": routed(second_server, "agent-secondary"),
        },
    )
    second_server.reply_tool_call("finish", {"message": "done"}, usage={"prompt_tokens": 50})
    conversation = Conversation(agent=Agent(llm=router, tools=[]), workspace=str(workspace))
    conversation.send_message("hello")
    conversation.run()

    stats = conversation.conversation_stats.usage_to_metrics
    assert {"router", "agent-primary", "agent-secondary"} <= set(stats)
    assert stats["agent-secondary"].accumulated_token_usage.prompt_tokens == 50
    assert (
        conversation.conversation_stats.get_combined_metrics().accumulated_token_usage.prompt_tokens
        == 50
    )
    conversation.close()


def test_a_router_needs_the_llms_it_routes_to(llm_server: ScriptedLLMServer) -> None:
    with pytest.raises(ValidationError, match="needs at least one LLM"):
        RandomRouter(llms_for_routing={})
    with pytest.raises(ValidationError, match="'secondary'"):
        MultimodalRouter(llms_for_routing={"primary": routed(llm_server, "p")})
