"""LocalConversation.switch_llm: the agent thinks with another LLM from the next call on.

Both LLMs talk to the scripted OpenAI-compatible server over real HTTP through litellm; the
model name in each request body says which LLM asked.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from llm_server import ScriptedLLMServer

from ohtui.sdk import LLM, Agent, Conversation, LocalConversation
from ohtui.sdk.conversation import list_conversations
from ohtui.sdk.conversation.impl.local_conversation import ASK_AGENT_LLM_USAGE_ID


def make_llm(server: ScriptedLLMServer, model: str, **options: Any) -> LLM:
    return LLM(
        model=f"openai/{model}",
        base_url=server.base_url,
        api_key="sk-test-key",
        num_retries=0,
        timeout=10,
        **options,
    )


@pytest.fixture
def conversation(llm_server: ScriptedLLMServer, tmp_path: Path) -> Iterator[LocalConversation]:
    agent = Agent(llm=make_llm(llm_server, "model-a"), tools=[])
    conv = Conversation(
        agent=agent,
        workspace=tmp_path / "ws",
        persistence_dir=tmp_path / "convs",
        visualizer=None,
    )
    assert isinstance(conv, LocalConversation)
    yield conv
    conv.close()


def test_the_next_run_uses_the_new_llm_and_counts_it_apart(
    conversation: LocalConversation, llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    llm_server.reply_text("from a")
    conversation.send_message("first")
    conversation.run()
    conversation.switch_llm(make_llm(llm_server, "model-b", usage_id="b"))
    llm_server.reply_text("from b")
    conversation.send_message("second")
    conversation.run()
    assert [r["model"] for r in llm_server.requests] == ["model-a", "model-b"]
    assert conversation.agent.llm.model == "openai/model-b"
    assert conversation.state.agent.llm.usage_id == "b"
    stats = conversation.state.stats
    assert stats.get_metrics_for_usage("default").accumulated_token_usage is not None
    assert stats.get_metrics_for_usage("b").accumulated_token_usage is not None
    # Saved: the picker lists the conversation under the model it now uses.
    (summary,) = list_conversations(tmp_path / "convs")
    assert summary.model == "openai/model-b"


def test_side_questions_follow_the_switch(
    conversation: LocalConversation, llm_server: ScriptedLLMServer
) -> None:
    llm_server.reply_text("answer a")
    assert conversation.ask_agent("which model?") == "answer a"
    assert conversation.llm_registry.get(ASK_AGENT_LLM_USAGE_ID).model == "openai/model-a"
    conversation.switch_llm(make_llm(llm_server, "model-b", usage_id="b", caching_prompt=False))
    with pytest.raises(KeyError):
        conversation.llm_registry.get(ASK_AGENT_LLM_USAGE_ID)
    llm_server.reply_text("answer b")
    assert conversation.ask_agent("and now?") == "answer b"
    asked = conversation.llm_registry.get(ASK_AGENT_LLM_USAGE_ID)
    assert asked.model == "openai/model-b" and asked.caching_prompt is False
    assert llm_server.requests[-1]["model"] == "model-b"


def test_an_llm_configured_alike_under_a_known_usage_id_is_reused(
    conversation: LocalConversation, llm_server: ScriptedLLMServer
) -> None:
    registered = conversation.agent.llm
    conversation.switch_llm(make_llm(llm_server, "model-a"))
    assert conversation.agent.llm is registered


def test_another_llm_under_a_known_usage_id_is_refused(
    conversation: LocalConversation, llm_server: ScriptedLLMServer
) -> None:
    with pytest.raises(ValueError, match="usage_id 'default' already names another LLM"):
        conversation.switch_llm(make_llm(llm_server, "model-b"))
    assert conversation.agent.llm.model == "openai/model-a"


def test_switch_llm_takes_only_an_llm(conversation: LocalConversation) -> None:
    with pytest.raises(TypeError, match="switch_llm takes an LLM, not str"):
        conversation.switch_llm("openai/gpt-4o")  # type: ignore[arg-type]
