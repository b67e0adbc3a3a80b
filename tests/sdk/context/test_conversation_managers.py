"""The conversation managers on their own: any object with `messages` and `llm` is an agent.

Summaries are written by a real LLM talking to the scripted server.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from ohtui.sdk import (
    LLM,
    AfterInvocationEvent,
    BeforeModelCallEvent,
    ContextWindowOverflowException,
    ConversationManager,
    HookProvider,
    HookRegistry,
    Message,
    MessageToolCall,
    NullConversationManager,
    SlidingWindowConversationManager,
    SummarizingConversationManager,
    TextContent,
)
from ohtui.sdk.context.conversation_manager import manager_from_config
from ohtui.sdk.llm.exceptions import LLMContextWindowExceedError
from ohtui.sdk.llm.message import ImageContent


@dataclass
class FakeLLM:
    model: str = "fake"
    context_window: int | None = 1000


@dataclass
class FakeAgent:
    messages: list[Message]
    llm: Any = field(default_factory=FakeLLM)


def user(text: str) -> Message:
    return Message(role="user", content=[TextContent(text=text)])


def assistant(text: str) -> Message:
    return Message(role="assistant", content=[TextContent(text=text)])


def call(*ids: str) -> Message:
    calls = [MessageToolCall(id=i, name="think", arguments="{}") for i in ids]
    return Message(role="assistant", content=[], tool_calls=calls)


def result(call_id: str, text: str = "ok") -> Message:
    return Message(
        role="tool", tool_call_id=call_id, name="think", content=[TextContent(text=text)]
    )


def texts(messages: list[Message]) -> list[str]:
    return [m.text or f"<{m.role} {m.tool_call_id or ''}>" for m in messages]


def turns(n: int) -> list[Message]:
    out: list[Message] = []
    for i in range(n):
        out += [user(f"u{i}"), assistant(f"a{i}")]
    return out


# --- validation ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"window_size": -1}, "window_size must be a non-negative integer, got -1"),
        ({"per_turn": 0}, "per_turn must be a positive integer, True, or False, got 0"),
        ({"per_turn": -3}, "per_turn must be a positive integer, True, or False, got -3"),
        (
            {"proactive_compression": {"compression_threshold": 0}},
            "compression_threshold must be between 0 (exclusive) and 1 (inclusive), got 0",
        ),
        (
            {"proactive_compression": {"compression_threshold": 1.5}},
            "between 0 (exclusive) and 1 (inclusive), got 1.5",
        ),
    ],
)
def test_sliding_window_validation(kwargs: dict[str, Any], words: str) -> None:
    with pytest.raises(ValueError, match=None) as info:
        SlidingWindowConversationManager(**kwargs)
    assert words in str(info.value)


def test_summarizing_validation_and_ratio_clamp() -> None:
    with pytest.raises(ValueError, match="Cannot provide both summarization_agent"):
        SummarizingConversationManager(
            summarization_agent=FakeAgent([]), summarization_system_prompt="x"
        )
    assert SummarizingConversationManager(summary_ratio=0.01).summary_ratio == 0.1
    assert SummarizingConversationManager(summary_ratio=5).summary_ratio == 0.8
    assert SummarizingConversationManager(summary_ratio=0.5).summary_ratio == 0.5


def test_proactive_threshold_resolution() -> None:
    assert SlidingWindowConversationManager()._compression_threshold is None
    assert (
        SlidingWindowConversationManager(proactive_compression=False)._compression_threshold is None
    )
    assert (
        SlidingWindowConversationManager(proactive_compression=True)._compression_threshold == 0.7
    )
    manager = SummarizingConversationManager(proactive_compression={"compression_threshold": 0.9})
    assert manager._compression_threshold == 0.9
    assert SummarizingConversationManager(proactive_compression={})._compression_threshold == 0.7


# --- the hook registry -----------------------------------------------------------------


def test_hook_registry_calls_callbacks_by_type_in_order() -> None:
    seen: list[str] = []
    registry = HookRegistry()
    registry.add_callback(BeforeModelCallEvent, lambda e: seen.append("before-1"))
    registry.add_callback(AfterInvocationEvent, lambda e: seen.append("after"))
    registry.add_callback(BeforeModelCallEvent, lambda e: seen.append("before-2"))

    class Provider:
        def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
            registry.add_callback(AfterInvocationEvent, lambda e: seen.append("provider"))

    assert isinstance(Provider(), HookProvider)
    registry.add_hook(Provider())
    agent = FakeAgent([])
    registry.invoke_callbacks(BeforeModelCallEvent(agent, count_tokens=lambda: 5))
    registry.invoke_callbacks(AfterInvocationEvent(agent))
    assert seen == ["before-1", "before-2", "after", "provider"]
    with pytest.raises(TypeError, match="hook event class"):
        registry.add_callback(str, print)  # type: ignore[arg-type]


def test_projected_tokens_are_counted_once_on_demand() -> None:
    counted: list[int] = []

    def count() -> int:
        counted.append(1)
        return 42

    event = BeforeModelCallEvent(FakeAgent([]), count_tokens=count)
    assert counted == []
    assert event.projected_input_tokens == 42
    assert event.projected_input_tokens == 42
    assert counted == [1]


# --- null ------------------------------------------------------------------------------


def test_null_manager_changes_nothing_and_reraises_overflow() -> None:
    agent = FakeAgent(turns(30))
    before = list(agent.messages)
    manager = NullConversationManager()
    manager.apply_management(agent)
    manager.reduce_context(agent)
    assert agent.messages == before
    error = LLMContextWindowExceedError("too long")
    with pytest.raises(LLMContextWindowExceedError) as info:
        manager.reduce_context(agent, error)
    assert info.value is error


# --- sliding window --------------------------------------------------------------------


def test_window_keeps_the_newest_messages() -> None:
    agent = FakeAgent(turns(5))  # 10 messages
    manager = SlidingWindowConversationManager(window_size=4)
    manager.apply_management(agent)
    assert texts(agent.messages) == ["u3", "a3", "u4", "a4"]
    assert manager.removed_message_count == 6
    manager.apply_management(agent)  # within the window: nothing happens
    assert manager.removed_message_count == 6


def test_trim_point_never_starts_with_a_tool_result_or_orphan_call() -> None:
    messages = [user("u0"), call("c1"), result("c1"), assistant("a0"), user("u1"), assistant("a1")]
    agent = FakeAgent(messages)
    manager = SlidingWindowConversationManager(window_size=4)
    manager.apply_management(agent)  # the cut at index 2 (a tool result) moves on to u1
    assert texts(agent.messages) == ["u1", "a1"]
    assert manager.removed_message_count == 4


def test_trim_falls_back_to_a_complete_tool_call_batch() -> None:
    # No plain user message after the cut: a call with all its results may start the history.
    messages = [user("u0"), call("c1"), result("c1"), call("c2", "c3"), result("c2"), result("c3")]
    messages.append(assistant("done"))
    agent = FakeAgent(messages)
    manager = SlidingWindowConversationManager(window_size=4)
    manager.apply_management(agent)
    assert texts(agent.messages) == ["<assistant >", "ok", "ok", "done"]
    assert agent.messages[0].tool_calls is not None
    assert manager.removed_message_count == 3


def test_trim_skips_a_call_batch_missing_results() -> None:
    messages = [user("u0"), assistant("a0"), call("c1", "c2"), result("c1"), assistant("a1")]
    agent = FakeAgent(messages)
    manager = SlidingWindowConversationManager(window_size=3)
    manager.apply_management(agent)  # no valid point: a warning, nothing removed
    assert len(agent.messages) == 5
    with pytest.raises(ContextWindowOverflowException, match="Unable to trim conversation"):
        manager.reduce_context(agent, LLMContextWindowExceedError("too long"))


def test_reduce_within_the_window_removes_at_least_two() -> None:
    agent = FakeAgent(turns(3))
    manager = SlidingWindowConversationManager(window_size=40)
    manager.reduce_context(agent)
    assert texts(agent.messages) == ["u1", "a1", "u2", "a2"]


def test_window_size_zero_clears_everything() -> None:
    agent = FakeAgent(turns(3))
    manager = SlidingWindowConversationManager(window_size=0)
    manager.apply_management(agent)
    assert agent.messages == []
    assert manager.removed_message_count == 6


def test_overflow_truncates_the_oldest_tool_results_first() -> None:
    long_text = "A" * 150 + "B" * 600 + "C" * 150
    image = ImageContent(image_urls=["data:image/png;base64,aGVsbG8gd29ybGQ="])
    old = Message(role="tool", tool_call_id="c1", content=[TextContent(text=long_text), image])
    newer = result("c2", "Z" * 1000)
    messages = [user("u"), call("c1"), old, call("c2"), newer, assistant("a")]
    agent = FakeAgent(messages)
    manager = SlidingWindowConversationManager()
    manager.reduce_context(agent, LLMContextWindowExceedError("too long"))

    assert len(agent.messages) == 6  # nothing trimmed
    cut = agent.messages[2]
    text = cut.content[0]
    assert isinstance(text, TextContent)
    assert text.text == (
        long_text[:200] + "...\n\n... [truncated: 500 chars removed] ...\n\n..." + long_text[-200:]
    )
    assert cut.content[1] == TextContent(text="[image: png, 11 bytes]")
    assert cut.tool_call_id == "c1"
    assert agent.messages[4] == newer  # the newer result is untouched
    assert manager.removed_message_count == 0

    # Truncated already: the next overflow trims instead (no user message is left after the
    # cut, so the history starts at the next complete tool call).
    manager.reduce_context(agent, LLMContextWindowExceedError("too long"))
    assert agent.messages == [call("c2"), newer, assistant("a")]
    assert manager.removed_message_count == 3
    # Proactive or routine reductions never truncate.
    agent = FakeAgent([user("u"), call("c1"), result("c1", "x" * 1000), assistant("a"), user("v")])
    SlidingWindowConversationManager().reduce_context(agent)
    assert texts(agent.messages) == ["v"]


def test_truncation_can_be_turned_off() -> None:
    messages = [user("u0"), call("c1"), result("c1", "x" * 1000), assistant("a"), user("u1")]
    agent = FakeAgent(messages)
    SlidingWindowConversationManager(should_truncate_results=False).reduce_context(
        agent, LLMContextWindowExceedError("too long")
    )
    assert texts(agent.messages) == ["u1"]


def test_per_turn_applies_the_window_before_every_nth_model_call() -> None:
    registry = HookRegistry()
    manager = SlidingWindowConversationManager(window_size=2, per_turn=3)
    registry.add_hook(manager)
    agent = FakeAgent(turns(3))
    for _ in range(2):
        registry.invoke_callbacks(BeforeModelCallEvent(agent))
    assert len(agent.messages) == 6
    registry.invoke_callbacks(BeforeModelCallEvent(agent))
    assert texts(agent.messages) == ["u2", "a2"]
    assert manager.get_state()["model_call_count"] == 3

    every = SlidingWindowConversationManager(window_size=2, per_turn=True)
    registry = HookRegistry()
    registry.add_hook(every)
    agent = FakeAgent(turns(3))
    registry.invoke_callbacks(BeforeModelCallEvent(agent))
    assert texts(agent.messages) == ["u2", "a2"]


def test_proactive_compression_reduces_at_the_threshold() -> None:
    manager = SlidingWindowConversationManager(window_size=40, proactive_compression=True)
    registry = HookRegistry()
    registry.add_hook(manager)
    agent = FakeAgent(turns(3), llm=FakeLLM(context_window=1000))
    registry.invoke_callbacks(BeforeModelCallEvent(agent, count_tokens=lambda: 699))
    assert len(agent.messages) == 6
    registry.invoke_callbacks(BeforeModelCallEvent(agent, count_tokens=lambda: 700))
    assert texts(agent.messages) == ["u1", "a1", "u2", "a2"]
    # An unknown window falls back to 200k tokens.
    agent = FakeAgent(turns(3), llm=FakeLLM(context_window=None))
    registry.invoke_callbacks(BeforeModelCallEvent(agent, count_tokens=lambda: 139_999))
    assert len(agent.messages) == 6
    registry.invoke_callbacks(BeforeModelCallEvent(agent, count_tokens=lambda: 140_000))
    assert len(agent.messages) == 4


# --- state -----------------------------------------------------------------------------


def test_state_round_trip_and_class_mismatch() -> None:
    manager = SlidingWindowConversationManager(window_size=2, per_turn=True)
    manager.apply_management(FakeAgent(turns(3)))
    manager._model_call_count = 7
    state = manager.get_state()
    assert state == {
        "__name__": "SlidingWindowConversationManager",
        "removed_message_count": 4,
        "model_call_count": 7,
    }
    fresh = SlidingWindowConversationManager(window_size=2, per_turn=True)
    assert fresh.restore_from_session(state) is None
    assert fresh.removed_message_count == 4
    assert fresh.get_state() == state
    with pytest.raises(ValueError, match="Invalid conversation manager state"):
        SummarizingConversationManager().restore_from_session(state)


def test_config_round_trip() -> None:
    for manager in (
        NullConversationManager(),
        SlidingWindowConversationManager(5, False, per_turn=2, proactive_compression=True),
        SummarizingConversationManager(0.5, 4, summarization_system_prompt="Be brief."),
    ):
        again = manager_from_config(manager.to_config())
        assert type(again) is type(manager)
        assert again.to_config() == manager.to_config()
    with pytest.raises(ValueError, match="unknown conversation manager 'Nope'"):
        manager_from_config({"kind": "Nope"})


# --- summarizing -----------------------------------------------------------------------


def test_summarizing_replaces_the_oldest_with_a_user_summary(llm: LLM, llm_server) -> None:
    llm_server.reply_text("- the user said hello")
    agent = FakeAgent(turns(10), llm=llm)  # 20 messages
    manager = SummarizingConversationManager(summary_ratio=0.3, preserve_recent_messages=4)
    manager.apply_management(agent)  # never summarizes on its own
    assert len(agent.messages) == 20
    manager.reduce_context(agent, LLMContextWindowExceedError("too long"))

    request = llm_server.requests[0]
    assert "tools" not in request
    assert request["messages"][0]["role"] == "system"
    assert "summar" in request["messages"][0]["content"]
    assert [m["content"] for m in request["messages"][1:7]] == ["u0", "a0", "u1", "a1", "u2", "a2"]
    assert request["messages"][-1] == {
        "role": "user",
        "content": "Please summarize this conversation.",
    }
    assert agent.messages[0] == user("- the user said hello")
    assert texts(agent.messages[1:3]) == ["u3", "a3"]
    assert len(agent.messages) == 15
    assert manager.removed_message_count == 6

    # A second summary folds the first one in; it is not counted as removed.
    llm_server.reply_text("- summary two")
    manager.reduce_context(agent, LLMContextWindowExceedError("too long"))
    sent = [m["content"] for m in llm_server.requests[1]["messages"][1:3]]
    assert sent == ["- the user said hello", "u3"]
    assert agent.messages[0].text == "- summary two"
    assert manager.removed_message_count == 6 + 4 - 1

    state = manager.get_state()
    fresh = SummarizingConversationManager(summary_ratio=0.3, preserve_recent_messages=4)
    assert fresh.restore_from_session(state) == [user("- summary two")]
    assert fresh.removed_message_count == 9


def test_summarizing_split_keeps_tool_pairs_together(llm: LLM, llm_server) -> None:
    llm_server.reply_text("summary")
    messages = [user("u0"), call("c1"), result("c1"), assistant("a0"), *turns(4)]
    agent = FakeAgent(messages, llm=llm)
    manager = SummarizingConversationManager(summary_ratio=0.2, preserve_recent_messages=2)
    manager.reduce_context(agent, LLMContextWindowExceedError("x"))  # cut at 2 moves to 3
    assert texts(agent.messages[:2]) == ["summary", "a0"]
    assert manager.removed_message_count == 3


def test_summarizing_errors(llm: LLM, llm_server) -> None:
    manager = SummarizingConversationManager(preserve_recent_messages=10)
    agent = FakeAgent(turns(4), llm=llm)
    overflow = LLMContextWindowExceedError("too long")
    with pytest.raises(ContextWindowOverflowException, match="insufficient messages"):
        manager.reduce_context(agent, overflow)
    manager.reduce_context(agent)  # proactive: only logged
    assert len(agent.messages) == 8

    llm_server.reply_error(500)
    with pytest.raises(Exception, match=r"500|server"):
        SummarizingConversationManager(preserve_recent_messages=2).reduce_context(
            FakeAgent(turns(6), llm=llm), overflow
        )
    assert llm_server.requests  # the summary was asked for


def test_summarization_agent_supplies_llm_and_prompt(llm: LLM, llm_server) -> None:
    @dataclass
    class Summarizer:
        llm: Any
        system_prompt: str = "You summarize tersely."
        messages: list[Message] = field(default_factory=list)

    llm_server.reply_text("terse")
    manager = SummarizingConversationManager(
        preserve_recent_messages=2, summarization_agent=Summarizer(llm)
    )
    agent = FakeAgent(turns(5), llm=FakeLLM())  # the main model is never asked
    manager.reduce_context(agent, LLMContextWindowExceedError("x"))
    assert llm_server.requests[0]["messages"][0]["content"] == "You summarize tersely."
    assert agent.messages[0].text == "terse"
    with pytest.raises(ValueError, match="must have an `llm`"):
        SummarizingConversationManager(summarization_agent=object())


def test_custom_manager_must_call_base_register_hooks() -> None:
    class Counting(ConversationManager):
        def apply_management(self, agent: Any, **kwargs: Any) -> None:
            agent.messages[:] = agent.messages[-1:]

        def reduce_context(self, agent: Any, e: Exception | None = None, **kw: Any) -> None:
            agent.messages[:] = agent.messages[1:]

    manager = Counting(proactive_compression=True)
    registry = HookRegistry()
    registry.add_hook(manager)
    agent = FakeAgent(turns(2), llm=FakeLLM(context_window=10))
    registry.invoke_callbacks(BeforeModelCallEvent(agent, count_tokens=lambda: 9))
    assert len(agent.messages) == 3
