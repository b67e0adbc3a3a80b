"""Tests for what every agent shares: built-in tool choice, agent context, verify() on resume,
and a custom agent that only implements step().

Conversations run against the scripted OpenAI-compatible server (tests/llm_server.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from ohtui.sdk import (
    LLM,
    Agent,
    AgentBase,
    Conversation,
    ConversationErrorEvent,
    ConversationExecutionStatus,
    ConversationRunError,
    LocalConversation,
    Message,
    MessageEvent,
    TextContent,
    Tool,
)
from ohtui.sdk.context import AgentContext
from ohtui.sdk.conversation.impl.local_conversation import _agent_already_surfaced_error
from ohtui.sdk.event.base import Event
from ohtui.sdk.llm.streaming import TokenCallbackType

Status = ConversationExecutionStatus
Factory = Callable[..., LocalConversation]


@pytest.fixture
def make_conversation(llm: LLM, workspace: Path, persistence_dir: Path) -> Iterator[Factory]:
    """Build conversations for an agent (a plain Agent by default); close them at the end."""
    made: list[LocalConversation] = []

    def make(agent: AgentBase | None = None, **kwargs: Any) -> LocalConversation:
        kwargs.setdefault("visualizer", None)
        conv = Conversation(
            agent=agent or Agent(llm=llm),
            workspace=workspace,
            persistence_dir=persistence_dir,
            **kwargs,
        )
        made.append(conv)
        return conv

    yield make
    for conv in made:
        conv.close()


def offered(request: dict[str, Any]) -> set[str]:
    return {t["function"]["name"] for t in request.get("tools", [])}


# --- built-in tools ------------------------------------------------------------------------


def test_include_default_tools_chooses_the_built_ins(make_conversation, llm, llm_server) -> None:
    llm_server.reply_text("Hello.")
    llm_server.reply_text("Hello again.")
    only_finish = Agent(
        llm=llm, tools=[Tool(name="terminal")], include_default_tools=["FinishTool"]
    )
    conv = make_conversation(only_finish)
    conv.send_message("hi")
    conv.run()
    assert offered(llm_server.requests[0]) == {"terminal", "finish"}

    none = Agent(llm=llm, include_default_tools=[])
    bare = make_conversation(none)
    bare.send_message("hi")
    bare.run()
    assert "tools" not in llm_server.requests[1] or offered(llm_server.requests[1]) == set()
    assert Agent(llm=llm).include_default_tools == ["FinishTool", "ThinkTool"]


def test_an_unknown_built_in_is_named_at_once(llm) -> None:
    with pytest.raises(ValidationError, match=r"SleepTool.*FinishTool, ThinkTool"):
        Agent(llm=llm, include_default_tools=["FinishTool", "SleepTool"])


# --- agent context ---------------------------------------------------------------------------


def test_agent_context_adds_to_the_system_prompt_and_each_user_message(
    make_conversation, llm, llm_server
) -> None:
    llm_server.reply_text("Cited.")
    context = AgentContext(
        system_message_suffix="Answer in French.", user_message_suffix="Always cite sources."
    )
    conv = make_conversation(Agent(llm=llm, agent_context=context))
    conv.send_message("What is ohtui?")
    conv.run()

    system, user = llm_server.requests[0]["messages"][:2]
    assert system["content"].rstrip().endswith("Answer in French.\n</ADDITIONAL_INSTRUCTIONS>")
    assert "What is ohtui?" in user["content"]
    assert user["content"].endswith("Always cite sources.")
    [event] = [e for e in conv.state.events if isinstance(e, MessageEvent) and e.source == "user"]
    assert event.llm_message.text == "What is ohtui?"  # what the user wrote stays as written
    assert [c.text for c in event.extended_content] == ["Always cite sources."]


def test_without_agent_context_a_user_message_is_left_plain(make_conversation) -> None:
    conv = make_conversation()
    conv.send_message("plain")
    [event] = [e for e in conv.state.events if isinstance(e, MessageEvent)]
    assert event.extended_content == []


# --- verify --------------------------------------------------------------------------------


def persisted(agent: AgentBase) -> AgentBase:
    """The agent as a saved conversation holds it: through JSON and back."""
    return AgentBase.model_validate_json(agent.model_dump_json())


def test_verify_accepts_a_new_llm_and_added_tools(llm) -> None:
    saved = persisted(Agent(llm=llm, tools=[Tool(name="terminal")]))
    other_llm = llm.model_copy(update={"model": "openai/another"})
    runtime = Agent(llm=other_llm, tools=[Tool(name="terminal"), Tool(name="file_editor")])
    assert runtime.verify(saved) is runtime


@pytest.mark.parametrize(
    ("saved_tools", "saved_built_ins", "runtime_tools", "runtime_built_ins", "removed"),
    [
        (["terminal", "file_editor"], None, ["terminal"], None, "file_editor"),
        (["terminal"], ["FinishTool"], ["file_editor"], ["FinishTool"], "terminal"),
        (["terminal"], ["FinishTool"], ["terminal"], ["ThinkTool"], "finish"),
        ([], ["FinishTool", "ThinkTool"], [], ["FinishTool"], "think"),
    ],
)
def test_verify_refuses_removed_tools_naming_them(
    llm: LLM,
    saved_tools: list[str],
    saved_built_ins: list[str] | None,
    runtime_tools: list[str],
    runtime_built_ins: list[str] | None,
    removed: str,
) -> None:
    def agent(tools: list[str], built_ins: list[str] | None) -> Agent:
        extra = {} if built_ins is None else {"include_default_tools": built_ins}
        return Agent(llm=llm, tools=[Tool(name=name) for name in tools], **extra)

    saved = persisted(agent(saved_tools, saved_built_ins))
    with pytest.raises(ValueError, match="tools were removed mid-conversation") as info:
        agent(runtime_tools, runtime_built_ins).verify(saved)
    assert f"removed: {removed}" in str(info.value)


class StepOnlyAgent(AgentBase):
    """A custom agent: says one thing and finishes, or fails when told to."""

    def step(
        self,
        conversation: LocalConversation,
        on_event: Callable[[Event], None],
        on_token: TokenCallbackType | None = None,
    ) -> None:
        last = conversation.state.events[-1]
        text = last.llm_message.text if isinstance(last, MessageEvent) else ""
        if text == "fail quietly":
            raise RuntimeError("nothing said")
        if text == "fail loudly":
            on_event(
                ConversationErrorEvent(source="agent", code="ToolServerDown", detail="precise")
            )
            raise RuntimeError("generic")
        reply = Message(role="assistant", content=[TextContent(text="done")])
        on_event(MessageEvent(source="agent", llm_message=reply))
        conversation.state.execution_status = Status.FINISHED


def test_verify_refuses_another_agent_class(llm) -> None:
    with pytest.raises(
        ValueError,
        match="persisted agent is of type StepOnlyAgent, self is of type Agent",
    ):
        Agent(llm=llm).verify(persisted(StepOnlyAgent(llm=llm)))


def test_resuming_with_another_agent_class_is_refused(make_conversation, llm) -> None:
    first = make_conversation(StepOnlyAgent(llm=llm))
    first.send_message("hello")
    first.close()
    with pytest.raises(ValueError, match="agent is of type StepOnlyAgent, self is of type Agent"):
        make_conversation(Agent(llm=llm), conversation_id=first.id)
    again = make_conversation(StepOnlyAgent(llm=llm), conversation_id=first.id)
    assert len(again.state.events) == 1


# --- a custom agent --------------------------------------------------------------------------


def test_a_custom_agent_needs_only_step(make_conversation, llm) -> None:
    conv = make_conversation(StepOnlyAgent(llm=llm, tools=[Tool(name="terminal")]))
    conv.send_message("hello")
    conv.run()
    assert conv.state.execution_status is Status.FINISHED
    assert set(conv.agent.tools_map) == {"terminal", "finish", "think"}


def test_a_custom_agent_without_side_questions_or_condensing_says_so(
    make_conversation, llm
) -> None:
    from ohtui.sdk.context.condenser import LLMSummarizingCondenser

    condenser = LLMSummarizingCondenser(llm=llm.model_copy(update={"usage_id": "condenser"}))
    conv = make_conversation(StepOnlyAgent(llm=llm, condenser=condenser))
    conv.send_message("hello")
    with pytest.raises(NotImplementedError, match="StepOnlyAgent cannot answer side questions"):
        conv.ask_agent("what now?")
    with pytest.raises(ValueError, match="StepOnlyAgent does not condense on request"):
        conv.condense()
    assert [type(e).__name__ for e in conv.state.events] == ["MessageEvent"]


def test_a_run_error_carries_the_error_event_it_recorded(make_conversation, llm) -> None:
    conv = make_conversation(StepOnlyAgent(llm=llm))
    conv.send_message("fail quietly")
    with pytest.raises(ConversationRunError) as caught:
        conv.run()
    [error] = [e for e in conv.state.events if isinstance(e, ConversationErrorEvent)]
    assert (error.source, error.code, error.detail) == (
        "environment",
        "RuntimeError",
        "nothing said",
    )
    assert caught.value.conversation_error == error


def test_an_error_the_agent_reported_itself_is_not_repeated(make_conversation, llm) -> None:
    conv = make_conversation(StepOnlyAgent(llm=llm))
    conv.send_message("fail loudly")
    with pytest.raises(ConversationRunError) as caught:
        conv.run()
    [error] = [e for e in conv.state.events if isinstance(e, ConversationErrorEvent)]
    assert (error.source, error.code, error.detail) == ("agent", "ToolServerDown", "precise")
    assert caught.value.conversation_error == error

    conv.send_message("fail quietly")  # the agent's error of the last run does not count
    with pytest.raises(ConversationRunError) as again:
        conv.run()
    errors = [e for e in conv.state.events if isinstance(e, ConversationErrorEvent)]
    assert [e.code for e in errors] == ["ToolServerDown", "RuntimeError"]
    assert again.value.conversation_error == errors[-1]


def test_only_the_newest_error_of_this_run_counts_as_reported_by_the_agent() -> None:
    """The run loop's test (the SDK's name): what the agent reported is not said twice."""
    by_agent = ConversationErrorEvent(source="agent", code="ToolServerDown", detail="a")
    by_run = ConversationErrorEvent(source="environment", code="RuntimeError", detail="b")
    reply = MessageEvent(
        source="agent", llm_message=Message(role="assistant", content=[TextContent(text="x")])
    )
    assert not _agent_already_surfaced_error([])
    assert _agent_already_surfaced_error([by_agent, reply])  # later non-errors do not hide it
    assert not _agent_already_surfaced_error([by_agent, by_run])  # the newest error counts
    assert not _agent_already_surfaced_error([by_agent], since=1)  # from an earlier run
    assert _agent_already_surfaced_error([by_run, by_agent], since=1)
