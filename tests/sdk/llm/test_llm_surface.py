"""The LLM's smaller SDK surface: vision, resetting metrics, the `openhands/` prefix."""

from __future__ import annotations

from llm_server import ScriptedLLMServer

from ohtui.sdk import LLM
from ohtui.sdk.llm import ImageContent, Message, TextContent
from ohtui.sdk.llm.openhands_provider import OPENHANDS_PROXY_URL, route

USER = [Message(role="user", content=[TextContent(text="hi")])]


def test_vision_follows_the_model_map_and_can_be_turned_off() -> None:
    assert LLM(model="openai/gpt-4o").vision_is_active()
    assert LLM(model="openhands/gpt-4o").vision_is_active()
    assert not LLM(model="openai/gpt-4o", disable_vision=True).vision_is_active()
    assert not LLM(model="openai/gpt-3.5-turbo").vision_is_active()
    assert not LLM(model="openai/no-such-model-anywhere").vision_is_active()


def test_reset_metrics_starts_counting_afresh(llm: LLM, llm_server: ScriptedLLMServer) -> None:
    llm_server.reply_text("one", usage={"prompt_tokens": 7, "completion_tokens": 1})
    llm.completion(USER)
    assert llm.metrics.accumulated_token_usage.prompt_tokens == 7
    before = llm.metrics
    llm.reset_metrics()
    assert llm.metrics is not before
    assert llm.metrics.accumulated_token_usage.prompt_tokens == 0
    assert before.accumulated_token_usage.prompt_tokens == 7  # the old totals are left alone
    llm_server.reply_text("two", usage={"prompt_tokens": 5, "completion_tokens": 1})
    llm.completion(USER)
    assert llm.metrics.accumulated_token_usage.prompt_tokens == 5


def test_an_openhands_model_is_asked_at_the_proxy_by_its_own_name(
    llm_server: ScriptedLLMServer,
) -> None:
    llm = LLM(
        model="openhands/gpt-5-mini-2025-08-07",
        base_url=llm_server.base_url,
        api_key="sk-proxy-key-123",
        num_retries=0,
    )
    llm_server.reply_text("hello from the proxy")
    assert llm.completion(USER).message.text == "hello from the proxy"
    assert llm_server.requests[0]["model"] == "gpt-5-mini-2025-08-07"
    assert llm_server.request_headers[0]["authorization"] == "Bearer sk-proxy-key-123"
    assert llm.context_window == 272000  # known under its own name


def test_without_a_base_url_the_openhands_proxy_is_used() -> None:
    assert route("openhands/claude-sonnet-4", None) == (
        "litellm_proxy/claude-sonnet-4",
        OPENHANDS_PROXY_URL,
    )
    assert route("openhands/x", "http://127.0.0.1:1/v1") == (
        "litellm_proxy/x",
        "http://127.0.0.1:1/v1",
    )
    assert route("openai/gpt-4o", None) == ("openai/gpt-4o", None)


def test_with_vision_disabled_images_are_not_sent(llm_server: ScriptedLLMServer) -> None:
    llm = LLM(
        model="openai/gpt-4o", base_url=llm_server.base_url, num_retries=0, disable_vision=True
    )
    image = ImageContent(image_urls=["https://example.com/cat.png"])
    llm_server.reply_text("I read only the text.")
    llm.completion([Message(role="user", content=[TextContent(text="What is this?"), image])])
    sent = llm_server.requests[0]["messages"][0]["content"]
    assert "cat.png" not in str(sent)
    assert "What is this?" in str(sent)


def test_images_go_to_a_model_that_reads_them_and_not_to_one_that_does_not(
    llm_server: ScriptedLLMServer,
) -> None:
    url = "data:image/png;base64,iVBORw0KGgo="
    message = Message(
        role="user", content=[TextContent(text="What is this?"), ImageContent(image_urls=[url])]
    )
    for model in ("openai/gpt-4o", "openai/gpt-3.5-turbo"):
        llm_server.reply_text("An answer.")
        LLM(model=model, base_url=llm_server.base_url, num_retries=0).completion([message])
    vision, text_only = (request["messages"][0]["content"] for request in llm_server.requests)
    assert vision == [
        {"type": "text", "text": "What is this?"},
        {"type": "image_url", "image_url": {"url": url}},
    ]
    assert text_only == "What is this?"
