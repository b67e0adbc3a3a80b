"""Conversation managers inside the engine, against the scripted LLM server: what the LLM
receives before and after management, overflow recovery, hooks, and state across resume."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from ohtui.sdk import (
    LLM,
    AfterInvocationEvent,
    Agent,
    BeforeModelCallEvent,
    Conversation,
    ConversationExecutionStatus,
    ConversationManager,
    ConversationRunError,
    HookProvider,
    HookRegistry,
    LocalConversation,
    NullConversationManager,
    ObservationEvent,
    SlidingWindowConversationManager,
    SummarizingConversationManager,
    Tool,
)

Factory = Callable[..., LocalConversation]


@pytest.fixture
def make_conversation(llm: LLM, workspace: Path, persistence_dir: Path) -> Iterator[Factory]:
    """Conversations whose agent (a fresh one each) has the given conversation manager."""
    made: list[LocalConversation] = []

    def make(manager: Any, tools: tuple[str, ...] = (), **kwargs: Any) -> LocalConversation:
        agent = Agent(llm=llm, tools=[Tool(name=t) for t in tools], conversation_manager=manager)
        conv = Conversation(
            agent=agent,
            workspace=workspace,
            persistence_dir=persistence_dir,
            visualizer=None,
            **kwargs,
        )
        made.append(conv)
        return conv

    yield make
    for conv in made:
        conv.close()


def sent(request: dict[str, Any]) -> list[str]:
    """The messages of a request after the system prompt, as `role:content` strings."""
    out = []
    for message in request["messages"][1:]:
        if message.get("tool_calls"):
            names = ",".join(c["function"]["name"] for c in message["tool_calls"])
            out.append(f"{message['role']}:calls {names}")
        else:
            out.append(f"{message['role']}:{message['content']}")
    return out


def exchange(conv: LocalConversation, llm_server: Any, user: str, *replies: str) -> None:
    for reply in replies:
        llm_server.reply_text(reply)
    conv.send_message(user)
    conv.run()


def test_sliding_window_trims_what_the_llm_receives(make_conversation, llm_server) -> None:
    conv = make_conversation(SlidingWindowConversationManager(window_size=4))
    llm_server.reply_tool_call("think", {"thought": "hmm"})
    exchange(conv, llm_server, "first", "one")
    exchange(conv, llm_server, "second", "two")
    assert sent(llm_server.requests[2]) == [
        "user:first",
        "assistant:calls think",
        "tool:Your thought has been logged.",
        "assistant:one",
        "user:second",
    ]
    exchange(conv, llm_server, "third", "three")
    # After run 2 the window (4) cut the history at the next user message.
    assert sent(llm_server.requests[3]) == ["user:second", "assistant:two", "user:third"]
    assert llm_server.requests[3]["messages"][0] == llm_server.requests[0]["messages"][0]
    # The stored events are never changed.
    texts = [getattr(e, "text", None) for e in conv.state.events]
    assert "first" in texts
    assert conv.state.agent_state["conversation_manager"] == {
        "__name__": "SlidingWindowConversationManager",
        "removed_message_count": 4,
        "model_call_count": 0,
    }


def test_per_turn_applies_the_window_before_each_model_call(make_conversation, llm_server) -> None:
    conv = make_conversation(SlidingWindowConversationManager(window_size=2, per_turn=True))
    llm_server.reply_tool_call("think", {"thought": "hmm"})
    exchange(conv, llm_server, "go", "done")
    assert sent(llm_server.requests[0]) == ["user:go"]
    # No user message after the cut: the history starts at the complete tool call.
    assert sent(llm_server.requests[1]) == [
        "assistant:calls think",
        "tool:Your thought has been logged.",
    ]
    assert conv.state.agent_state["conversation_manager"]["model_call_count"] == 2


def test_overflow_truncates_the_oldest_tool_result_and_retries(
    make_conversation, llm_server, workspace
) -> None:
    big = workspace / "big.txt"
    big.write_text("".join(f"line {i:04d} of the big file\n" for i in range(200)))
    conv = make_conversation(SlidingWindowConversationManager(), tools=("file_editor",))
    llm_server.reply_tool_call("file_editor", {"command": "view", "path": str(big)})
    llm_server.reply_context_window_error()
    llm_server.reply_text("read it")
    conv.send_message("read big.txt")
    conv.run()

    assert conv.state.execution_status is ConversationExecutionStatus.FINISHED
    assert len(llm_server.requests) == 3
    full = llm_server.requests[1]["messages"][-1]["content"]
    retried = llm_server.requests[2]["messages"][-1]
    assert retried["role"] == "tool"
    removed = len(full) - 400
    assert removed > 1000
    assert retried["content"] == (
        f"{full[:200]}...\n\n... [truncated: {removed} chars removed] ...\n\n...{full[-200:]}"
    )
    # The observation event keeps the whole text.
    observation = next(e for e in conv.state.events if isinstance(e, ObservationEvent))
    assert "line 0100 of the big file" in observation.observation.text


def test_summarizing_on_overflow_and_resume(
    make_conversation, llm_server, llm, workspace, persistence_dir
) -> None:
    def manager() -> SummarizingConversationManager:
        return SummarizingConversationManager(summary_ratio=0.5, preserve_recent_messages=2)

    conv = make_conversation(manager())
    exchange(conv, llm_server, "u1", "a1")
    exchange(conv, llm_server, "u2", "a2")
    llm_server.reply_context_window_error()
    llm_server.reply_text("SUMMARY of u1 and a1")
    exchange(conv, llm_server, "u3", "a3")

    summary_request, retry = llm_server.requests[3], llm_server.requests[4]
    assert "tools" not in summary_request
    assert sent(summary_request) == ["user:u1", "assistant:a1", "user:" + SUMMARY_REQUEST]
    assert sent(retry) == ["user:SUMMARY of u1 and a1", "user:u2", "assistant:a2", "user:u3"]
    assert "tools" in retry
    saved = conv.state.agent_state["conversation_manager"]
    assert saved["removed_message_count"] == 2
    assert saved["summary_message"]["content"][0]["text"] == "SUMMARY of u1 and a1"

    # A restart: the resumed conversation sends exactly what the running one would have.
    conv_id = conv.id
    conv.close()
    agent = Agent(llm=llm, conversation_manager=manager())
    resumed = Conversation(
        agent=agent,
        workspace=workspace,
        persistence_dir=persistence_dir,
        conversation_id=conv_id,
        visualizer=None,
    )
    try:
        exchange(resumed, llm_server, "u4", "a4")
    finally:
        resumed.close()
    after = llm_server.requests[5]
    expected = [*retry["messages"], {"role": "assistant", "content": "a3"}]
    expected.append({"role": "user", "content": "u4"})
    assert after["messages"] == expected


SUMMARY_REQUEST = "Please summarize this conversation."


def test_null_manager_lets_an_overflow_fail_the_run(make_conversation, llm_server) -> None:
    conv = make_conversation(NullConversationManager())
    llm_server.reply_context_window_error()
    conv.send_message("hello")
    with pytest.raises(ConversationRunError):
        conv.run()
    assert conv.state.execution_status is ConversationExecutionStatus.ERROR
    assert len(llm_server.requests) == 1


def test_an_overflow_that_cannot_be_reduced_is_a_clear_error(make_conversation, llm_server) -> None:
    conv = make_conversation(SummarizingConversationManager(preserve_recent_messages=10))
    llm_server.reply_context_window_error()
    conv.send_message("hello")
    with pytest.raises(ConversationRunError) as info:
        conv.run()
    assert "insufficient messages for summarization" in str(info.value.__cause__)
    assert len(llm_server.requests) == 1


class Recording(ConversationManager):
    """Records the lifecycle events and management calls it receives."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        super().register_hooks(registry, **kwargs)
        registry.add_callback(BeforeModelCallEvent, self._before)
        registry.add_callback(AfterInvocationEvent, lambda e: self.seen.append("after-run"))

    def _before(self, event: BeforeModelCallEvent) -> None:
        tokens = event.projected_input_tokens
        assert isinstance(tokens, int)
        self.seen.append(f"before-call {len(event.agent.messages)} {tokens > 100}")

    def apply_management(self, agent: Any, **kwargs: Any) -> None:
        self.seen.append("apply")

    def reduce_context(self, agent: Any, e: Exception | None = None, **kwargs: Any) -> None:
        self.seen.append("reduce")
        agent.messages[:] = agent.messages[1:]


def test_hooks_fire_around_calls_and_runs(make_conversation, llm_server) -> None:
    manager = Recording()
    conv = make_conversation(manager)
    llm_server.reply_tool_call("think", {"thought": "hmm"})
    exchange(conv, llm_server, "go", "done")
    exchange(conv, llm_server, "again", "ok")
    assert manager.seen == [
        "before-call 1 True",
        "before-call 3 True",
        "after-run",
        "apply",
        "before-call 5 True",
        "after-run",
        "apply",
    ]


def test_agent_field_validation_and_serialization(llm: LLM) -> None:
    with pytest.raises(ValidationError, match="conversation_manager takes a ConversationManager"):
        Agent(llm=llm, conversation_manager="sliding")
    agent = Agent(
        llm=llm,
        conversation_manager={"kind": "SlidingWindowConversationManager", "window_size": 3},
    )
    assert isinstance(agent.conversation_manager, SlidingWindowConversationManager)
    assert agent.conversation_manager.window_size == 3
    dumped = agent.model_dump(mode="json")["conversation_manager"]
    assert dumped["kind"] == "SlidingWindowConversationManager"
    assert dumped["window_size"] == 3
    assert Agent(llm=llm).model_dump(mode="json")["conversation_manager"] is None


def test_proactive_compression_summarizes_before_the_call(llm_server, llm, workspace) -> None:
    small = llm.model_copy(update={"max_input_tokens": 100})  # every request is over 70%
    manager = SummarizingConversationManager(
        summary_ratio=0.5, preserve_recent_messages=2, proactive_compression=True
    )
    agent = Agent(llm=small, conversation_manager=manager)
    conv = Conversation(agent=agent, workspace=workspace, visualizer=None)
    try:
        exchange(conv, llm_server, "u1", "a1")  # too few messages: best effort, no summary
        llm_server.reply_text("S1")
        exchange(conv, llm_server, "u2", "a2")
    finally:
        conv.close()
    assert sent(llm_server.requests[0]) == ["user:u1"]
    assert sent(llm_server.requests[1]) == ["user:u1", "user:" + SUMMARY_REQUEST]
    assert sent(llm_server.requests[2]) == ["user:S1", "assistant:a1", "user:u2"]


def test_switching_strategy_on_resume_starts_from_the_whole_history(
    make_conversation, llm_server, llm, workspace, persistence_dir
) -> None:
    conv = make_conversation(SlidingWindowConversationManager(window_size=2))
    exchange(conv, llm_server, "u1", "a1")
    exchange(conv, llm_server, "u2", "a2")
    conv_id = conv.id
    conv.close()
    agent = Agent(llm=llm, conversation_manager=NullConversationManager())
    resumed = Conversation(
        agent=agent,
        workspace=workspace,
        persistence_dir=persistence_dir,
        conversation_id=conv_id,
        visualizer=None,
    )
    try:
        exchange(resumed, llm_server, "u3", "a3")
        assert resumed.state.agent_state["conversation_manager"]["__name__"] == (
            "NullConversationManager"
        )
    finally:
        resumed.close()
    assert sent(llm_server.requests[2]) == [
        "user:u1",
        "assistant:a1",
        "user:u2",
        "assistant:a2",
        "user:u3",
    ]


def test_an_interrupt_abandons_a_slow_summary(make_conversation, llm_server) -> None:
    conv = make_conversation(SummarizingConversationManager(preserve_recent_messages=1))
    exchange(conv, llm_server, "u1", "a1")
    llm_server.reply_context_window_error()
    llm_server.reply_text("a summary that takes long", delay=20)
    conv.send_message("u2")
    runner = threading.Thread(target=conv.run, daemon=True)
    runner.start()
    deadline = time.monotonic() + 10
    while len(llm_server.requests) < 3 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert sent(llm_server.requests[2])[-1] == "user:" + SUMMARY_REQUEST
    started = time.monotonic()
    conv.interrupt()
    runner.join(timeout=10)
    assert not runner.is_alive()
    assert time.monotonic() - started < 3
    assert conv.state.execution_status is ConversationExecutionStatus.PAUSED
    assert conv.state.agent_state["conversation_manager"]["summary_message"] is None


def test_a_conversation_manager_is_a_hook_provider() -> None:
    assert isinstance(SlidingWindowConversationManager(), HookProvider)
