"""Condensers in real runs against the scripted server: what the model receives before and
after a condensation, `condense()`, context-window errors, resume, and context counting."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from llm_server import Reply, ScriptedLLMServer, ToolCall

from ohtui.sdk import (
    LLM,
    Agent,
    AlwaysConfirm,
    Condensation,
    CondensationRequest,
    Conversation,
    ConversationExecutionStatus,
    LocalConversation,
    Tool,
)
from ohtui.sdk.context import LLMSummarizingCondenser, NoOpCondenser, PipelineCondenser
from ohtui.sdk.context.condenser.summary_prompt import SUMMARY_INSTRUCTIONS
from ohtui.sdk.conversation.exceptions import ConversationRunError

TASK = "Count to a large number with the think tool."
SUMMARY = "SUMMARY: counted so far."


def is_summary_request(body: dict[str, Any]) -> bool:
    messages = body["messages"]
    first = messages[0]["content"]
    text = first if isinstance(first, str) else "".join(p.get("text", "") for p in first)
    return len(messages) == 1 and text.startswith(SUMMARY_INSTRUCTIONS[:40])


def agent_requests(server: ScriptedLLMServer) -> list[dict[str, Any]]:
    return [r for r in server.requests if not is_summary_request(r)]


def thinker(steps: int) -> Callable[[dict[str, Any]], Reply]:
    """Think `steps` times, then answer; summary requests get SUMMARY."""
    count = {"agent": 0}

    def reply(body: dict[str, Any]) -> Reply:
        if is_summary_request(body):
            return Reply(text=SUMMARY)
        count["agent"] += 1
        if count["agent"] > steps:
            return Reply(text="Done counting.")
        n = count["agent"]
        return Reply(tool_calls=(ToolCall("think", json.dumps({"thought": f"n={n}"})),))

    return reply


def assert_calls_have_results(request: dict[str, Any]) -> None:
    """Every tool message answers a call of the assistant message before it, and every
    call is answered."""
    open_calls: set[str] = set()
    for message in request["messages"]:
        if message["role"] == "tool":
            assert message["tool_call_id"] in open_calls, message
            open_calls.discard(message["tool_call_id"])
        else:
            assert not open_calls, f"calls {open_calls} unanswered before {message['role']}"
            open_calls = {c["id"] for c in message.get("tool_calls") or []}
    assert not open_calls


def texts(request: dict[str, Any]) -> list[str]:
    out = []
    for message in request["messages"]:
        content = message.get("content") or ""
        if isinstance(content, list):
            content = "".join(p.get("text", "") for p in content)
        out.append(content)
    return out


@pytest.fixture
def open_conversation(
    llm: LLM, workspace: Path, persistence_dir: Path
) -> Iterator[Callable[..., LocalConversation]]:
    made: list[LocalConversation] = []

    def make(
        condenser: Any = None, tools: tuple[str, ...] = (), **kwargs: Any
    ) -> LocalConversation:
        agent = Agent(llm=llm, condenser=condenser, tools=[Tool(name=name) for name in tools])
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


def summarizer(llm: LLM, **kwargs: Any) -> LLMSummarizingCondenser:
    return LLMSummarizingCondenser(llm=llm.model_copy(update={"usage_id": "condenser"}), **kwargs)


def test_a_long_run_is_condensed_and_the_model_gets_the_summary(
    open_conversation, llm, llm_server
) -> None:
    llm_server.set_default(thinker(30))
    conv = open_conversation(summarizer(llm, max_size=20, keep_first=2))
    conv.send_message(TASK)
    conv.run()
    assert conv.state.execution_status is ConversationExecutionStatus.FINISHED
    condensations = [e for e in conv.state.events if isinstance(e, Condensation)]
    assert condensations, "a 30-step run over max_size=20 must condense"
    assert all(c.summary == SUMMARY for c in condensations)
    requests = agent_requests(llm_server)
    for request in requests:
        assert_calls_have_results(request)
        # the system prompt and the task are always there
        assert request["messages"][0]["role"] == "system"
        assert texts(request)[1].startswith(TASK)
        assert len(request["messages"]) <= 20 + 2
    after = requests[-1]
    assert SUMMARY in texts(after)
    assert 'n=1"' not in json.dumps(after)  # the first thought was forgotten
    # the log is never shortened: every step is still there
    assert sum(1 for r in requests) == 31
    assert len(conv.state.events) > 60


def test_the_summary_request_holds_the_forgotten_events(open_conversation, llm, llm_server):
    llm_server.set_default(thinker(12))
    conv = open_conversation(summarizer(llm, max_size=10, keep_first=2))
    conv.send_message(TASK)
    conv.run()
    summary_requests = [r for r in llm_server.requests if is_summary_request(r)]
    assert summary_requests
    first = texts(summary_requests[0])[0]
    assert "n=1" in first and "<EVENT>" in first
    assert TASK not in first  # the task is kept, never summarized away


def test_condense_without_a_condenser_says_how_to_configure_one(open_conversation) -> None:
    conv = open_conversation()
    with pytest.raises(
        ValueError, match=r"No condenser configured\..*condenser=LLMSummarizingCondenser"
    ):
        conv.condense()
    conv_noop = open_conversation(NoOpCondenser())
    with pytest.raises(
        ValueError, match="Condenser NoOpCondenser does not handle condensation requests"
    ):
        conv_noop.condense()
    assert not any(isinstance(e, CondensationRequest) for e in conv_noop.state.events)


def test_condense_records_a_request_and_condenses_at_once(
    open_conversation, llm, llm_server
) -> None:
    llm_server.set_default(thinker(8))
    conv = open_conversation(PipelineCondenser(condensers=[summarizer(llm, max_size=100)]))
    conv.send_message(TASK)
    conv.run()
    before = len(llm_server.requests)
    conv.condense(focus="the value of n")
    events = list(conv.state.events)
    assert isinstance(events[-2], CondensationRequest)
    assert events[-2].focus == "the value of n"
    assert isinstance(events[-1], Condensation) and events[-1].summary == SUMMARY
    [summary_request] = llm_server.requests[before:]
    assert "keep above all: the value of n" in texts(summary_request)[0]
    llm_server.set_default(Reply(text="ok"))
    conv.send_message("What next?")
    conv.run()
    last = llm_server.requests[-1]
    assert SUMMARY in texts(last)
    assert texts(last)[1].startswith(TASK)
    assert_calls_have_results(last)


def test_a_context_window_error_condenses_and_retries(open_conversation, llm, llm_server):
    for n in range(6):
        llm_server.reply_tool_call("think", {"thought": f"n={n}"})
    llm_server.reply_context_window_error()
    llm_server.reply_text(SUMMARY)
    llm_server.reply_text("Finished after condensing.")
    conv = open_conversation(summarizer(llm, max_size=100))
    conv.send_message(TASK)
    conv.run()
    assert conv.state.execution_status is ConversationExecutionStatus.FINISHED
    kinds = [type(e).__name__ for e in conv.state.events]
    assert "CondensationRequest" in kinds and "Condensation" in kinds
    retry = llm_server.requests[-1]
    assert SUMMARY in texts(retry)
    assert len(retry["messages"]) < len(llm_server.requests[-3]["messages"])


def test_a_second_context_window_error_is_a_clear_error(open_conversation, llm, llm_server):
    for n in range(4):
        llm_server.reply_tool_call("think", {"thought": f"n={n}"})
    llm_server.reply_context_window_error()
    llm_server.reply_text(SUMMARY)
    llm_server.reply_context_window_error()
    conv = open_conversation(summarizer(llm, max_size=100))
    conv.send_message(TASK)
    with pytest.raises(ConversationRunError, match="still does not fit after condensing"):
        conv.run()
    assert conv.state.execution_status is ConversationExecutionStatus.ERROR


def test_without_a_condenser_the_error_says_to_configure_one(open_conversation, llm_server):
    llm_server.reply_context_window_error()
    conv = open_conversation()
    conv.send_message(TASK)
    with pytest.raises(ConversationRunError, match="no condenser to shorten it: configure one"):
        conv.run()


def test_resume_sends_exactly_what_it_would_have_sent(
    open_conversation, llm, llm_server, workspace, persistence_dir
) -> None:
    script = thinker(25)
    failed = {"once": False}

    def reply(body: dict[str, Any]) -> Reply:
        agent_count = len(agent_requests(llm_server))
        if agent_count == 20 and not failed["once"] and not is_summary_request(body):
            failed["once"] = True
            return Reply(error_status=400, error_message="scripted stop before the restart")
        return script(body)

    llm_server.set_default(reply)
    conv = open_conversation(summarizer(llm, max_size=12, keep_first=2))
    conv.send_message(TASK)
    with pytest.raises(ConversationRunError):
        conv.run()
    assert any(isinstance(e, Condensation) for e in conv.state.events)
    before_restart = llm_server.requests[-1]
    conv_id = conv.id
    conv.close()

    resumed = open_conversation(summarizer(llm, max_size=12, keep_first=2), conversation_id=conv_id)
    resumed.run()
    first_after = llm_server.requests[llm_server.requests.index(before_restart) + 1]
    assert not is_summary_request(first_after)
    assert json.dumps(first_after, sort_keys=True) == json.dumps(before_restart, sort_keys=True)


def test_the_conversation_knows_the_tokens_in_context_and_the_window(
    llm_server, workspace, persistence_dir
) -> None:
    llm = LLM(
        model="openai/test-model",
        base_url=llm_server.base_url,
        api_key="sk-test",
        num_retries=0,
        max_input_tokens=32_000,
    )
    llm_server.reply_tool_call("think", {"thought": "a"}, usage={"prompt_tokens": 1000})
    llm_server.reply_text("done", usage={"prompt_tokens": 1500, "completion_tokens": 7})
    conv = Conversation(
        agent=Agent(llm=llm), workspace=workspace, persistence_dir=persistence_dir, visualizer=None
    )
    try:
        assert conv.state.stats.context is None
        conv.send_message(TASK)
        conv.run()
        context = conv.state.stats.context
        assert context is not None
        assert (context.tokens, context.window) == (1507, 32_000)
        assert context.fraction == pytest.approx(1507 / 32_000)
        total = conv.state.stats.get_combined_metrics().accumulated_token_usage.prompt_tokens
        assert total == 2500  # cumulative usage is another thing
    finally:
        conv.close()


def test_an_unknown_model_has_no_known_window(llm: LLM) -> None:
    assert llm.context_window is None
    assert LLM(model="gpt-4o").context_window == 128_000
    assert LLM(model="openai/test-model", max_input_tokens=1234).context_window == 1234
    count = llm.get_token_count([{"role": "user", "content": "hello world " * 50}])
    assert 90 <= count <= 120


def test_the_summaries_cost_is_counted_under_the_condensers_usage_id(
    open_conversation, llm, llm_server
) -> None:
    llm_server.set_default(thinker(3))
    conv = open_conversation(summarizer(llm, max_size=100))
    conv.send_message(TASK)
    conv.run()
    conv.condense()
    metrics = conv.state.stats.get_metrics_for_usage("condenser")
    assert metrics.call_count == 1
    assert conv.state.stats.get_metrics_for_usage("default").call_count == 4


def test_condense_during_a_run_waits_for_the_step_to_end(open_conversation, llm, llm_server):
    import threading
    import time

    for n in range(3):
        llm_server.reply(Reply(tool_calls=(ToolCall("think", json.dumps({"thought": f"n={n}"})),)))
    llm_server.reply(Reply(text="slow answer", delay=1.0))
    llm_server.reply_text(SUMMARY)
    conv = open_conversation(summarizer(llm, max_size=100))
    conv.send_message(TASK)
    runner = threading.Thread(target=conv.run)
    runner.start()
    while len(llm_server.requests) < 4:
        time.sleep(0.01)
    conv.condense()  # blocks until the slow step has recorded its answer
    runner.join(5)
    kinds = [type(e).__name__ for e in conv.state.events]
    assert kinds[-3:] == ["MessageEvent", "CondensationRequest", "Condensation"]
    assert conv.state.execution_status is ConversationExecutionStatus.FINISHED


def test_condensing_while_an_action_waits_never_forgets_it(open_conversation, llm, llm_server):
    for n in range(6):
        llm_server.reply_tool_call("think", {"thought": f"n={n}"})
    llm_server.reply_tool_call("terminal", {"command": "echo hi"})
    llm_server.reply_text(SUMMARY)
    conv = open_conversation(summarizer(llm, max_size=100), tools=("terminal",))
    conv.send_message(TASK)
    conv.set_confirmation_policy(AlwaysConfirm())
    conv.run()
    assert conv.state.execution_status is ConversationExecutionStatus.WAITING_FOR_CONFIRMATION
    [pending] = conv.state.get_unmatched_actions(conv.state.events)
    conv.condense()
    condensation = conv.state.events[-1]
    assert isinstance(condensation, Condensation)
    assert pending.id not in condensation.forgotten_event_ids
    assert condensation.forgotten_event_ids  # the thoughts before it were forgotten
    llm_server.reply_text("ran it")
    conv.run()  # approves and runs the waiting action, then asks the model
    last = llm_server.requests[-1]
    assert_calls_have_results(last)
    assert SUMMARY in texts(last) and "echo hi" in json.dumps(last)
