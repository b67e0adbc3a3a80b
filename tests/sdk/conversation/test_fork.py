"""LocalConversation.fork: a copy of the whole tree or of one branch, under a new id, made
idle with its own title, tags, metrics and agent; its origin recorded in the store.

Real runs against the scripted LLM server over HTTP, a real SQLite store.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from llm_server import Reply, ScriptedLLMServer, ToolCall
from tree_support import (
    Factory,
    RunThread,
    assert_is_tree,
    ids,
    open_conversation,
    texts,
    walk_to_root,
)

from ohtui.sdk import (
    LLM,
    ActionEvent,
    Agent,
    AlwaysConfirm,
    ConversationExecutionStatus,
    LocalConversation,
    MessageEvent,
    SystemPromptEvent,
    Tool,
)
from ohtui.sdk.conversation.exceptions import ConversationIdTakenError
from ohtui.sdk.conversation.store import ConversationStore

__all__ = ["open_conversation"]  # the fixture, used by name

Status = ConversationExecutionStatus


@pytest.fixture(autouse=True)
def close_forks(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Close every fork a test makes (each holds its conversation's lease)."""
    made: list[LocalConversation] = []
    original = LocalConversation.fork

    def fork(self: LocalConversation, **kwargs: Any) -> LocalConversation:
        conversation = original(self, **kwargs)
        made.append(conversation)
        return conversation

    monkeypatch.setattr(LocalConversation, "fork", fork)
    yield
    for conversation in made:
        conversation.close()


def said(conv, text: str) -> MessageEvent:
    return next(
        e for e in conv.state.events if isinstance(e, MessageEvent) and e.llm_message.text == text
    )


def turns(conv, llm_server: ScriptedLLMServer, *questions: str) -> None:
    for question in questions:
        llm_server.reply_text(f"answer to {question}")
        conv.send_message(question)
        conv.run()


def saved_ids(persistence_dir: Path) -> set[str]:
    store = ConversationStore(persistence_dir, read_only=True)
    try:
        return {row[0] for row in store._query("SELECT id FROM conversations")}
    finally:
        store.close()


def test_a_full_fork_copies_every_branch_and_head_then_goes_its_own_way(
    open_conversation: Factory, llm_server: ScriptedLLMServer, persistence_dir: Path
) -> None:
    source = open_conversation()
    turns(source, llm_server, "one", "two")
    source.navigate_to(said(source, "answer to one").id)
    turns(source, llm_server, "three")  # a sibling of "two"
    fork = source.fork(title="my fork", tags={"team": "a"})

    assert fork.id != source.id
    assert ids(fork.state.events) == ids(source.state.events)  # both branches
    assert fork.state.leaf_event_id == source.state.leaf_event_id
    assert ids(fork.state.active_branch()) == ids(source.state.active_branch())
    assert fork.state.execution_status is Status.IDLE  # the source finished
    assert source.state.execution_status is Status.FINISHED
    assert fork.state.title == "my fork"
    assert fork.state.tags == {"team": "a", "title": "my fork"}
    assert source.state.tags == {}
    assert fork.state.stats.get_combined_metrics().accumulated_token_usage is None or (
        fork.state.stats.get_combined_metrics().accumulated_token_usage.prompt_tokens == 0
    )
    source_tokens = source.state.stats.get_combined_metrics().accumulated_token_usage
    assert source_tokens is not None and source_tokens.prompt_tokens > 0

    store = ConversationStore(persistence_dir, read_only=True)
    try:
        assert store.fork_origin(fork.id.hex) == (source.id.hex, None)
        assert store.fork_origin(source.id.hex) is None
    finally:
        store.close()

    count = len(source.state.events)
    turns(fork, llm_server, "four")
    request = llm_server.requests[-1]
    assert [t for t in texts(request)[1:] if not t.startswith("answer")] == [
        "one",
        "three",
        "four",
    ]
    assert "two" not in texts(request)
    assert len(source.state.events) == count  # the source is untouched
    assert_is_tree(list(fork.state.events))


def test_a_fork_from_an_event_of_an_abandoned_branch_is_that_branch_alone(
    open_conversation: Factory, llm_server: ScriptedLLMServer, persistence_dir: Path
) -> None:
    source = open_conversation()
    turns(source, llm_server, "one", "two")
    two = said(source, "two")
    source.navigate_to(said(source, "answer to one").id)
    turns(source, llm_server, "three")
    assert two.id not in ids(source.state.active_branch())

    fork = source.fork(from_event_id=two.id)
    expected = walk_to_root(list(source.state.events), two.id)
    assert ids(fork.state.events) == expected  # the branch only, as a linear log
    assert fork.state.leaf_event_id == two.id
    assert ids(fork.state.active_branch()) == expected
    assert ids(fork.state.view.events) == expected
    events = list(fork.state.events)
    for before, event in itertools.pairwise(events):
        assert event.parent_id == before.id

    store = ConversationStore(persistence_dir, read_only=True)
    try:
        assert store.fork_origin(fork.id.hex) == (source.id.hex, two.id)
    finally:
        store.close()

    llm_server.reply_text("answer to two, again")
    fork.run()  # HEAD is a user message: the fork answers it
    request = llm_server.requests[-1]
    assert texts(request)[1:] == ["one", "answer to one", "two"]


def test_metrics_are_kept_on_request_and_the_agent_can_be_replaced(
    open_conversation: Factory, llm: LLM, llm_server: ScriptedLLMServer
) -> None:
    source = open_conversation()
    turns(source, llm_server, "one")
    kept = source.fork(reset_metrics=False)
    source_usage = source.state.stats.get_combined_metrics().accumulated_token_usage
    kept_usage = kept.state.stats.get_combined_metrics().accumulated_token_usage
    assert source_usage is not None and kept_usage is not None
    assert kept_usage.prompt_tokens == source_usage.prompt_tokens > 0

    other_llm = llm.model_copy(update={"model": "openai/other-model"})
    replaced = source.fork(agent=Agent(llm=other_llm, tools=[Tool(name="terminal")]))
    assert replaced.agent.llm.model == "openai/other-model"
    assert source.agent.llm.model == "openai/test-model"
    turns(replaced, llm_server, "two")
    assert llm_server.requests[-1]["model"] == "other-model"
    assert texts(llm_server.requests[-1])[1:] == ["one", "answer to one", "two"]


def test_a_fork_of_a_waiting_conversation_is_idle_and_asks_before_running_the_action(
    open_conversation: Factory, llm_server: ScriptedLLMServer, workspace: Path
) -> None:
    source = open_conversation()
    source.set_confirmation_policy(AlwaysConfirm())
    llm_server.reply_tool_call("terminal", {"command": "echo ran > marker.txt"})
    source.send_message("make a marker")
    source.run()
    assert source.state.execution_status is Status.WAITING_FOR_CONFIRMATION
    action = next(e for e in source.state.events if isinstance(e, ActionEvent))

    fork = source.fork(from_event_id=action.id)
    assert fork.state.execution_status is Status.IDLE
    requests = len(llm_server.requests)
    fork.run()  # nobody confirmed the call in the fork: it waits, nothing runs
    assert fork.state.execution_status is Status.WAITING_FOR_CONFIRMATION
    assert not (workspace / "marker.txt").exists()
    assert len(llm_server.requests) == requests
    fork.reject_pending_actions("not in the fork")
    assert fork.state.get_unmatched_actions(fork.state.active_branch()) == []
    assert source.state.get_unmatched_actions(source.state.active_branch()) == [action]


def test_a_fork_of_a_running_conversation_waits_for_the_step(
    open_conversation: Factory, llm_server: ScriptedLLMServer
) -> None:
    source = open_conversation()
    thought = json.dumps({"thought": "slow"})
    llm_server.reply(Reply(tool_calls=(ToolCall("think", thought),), delay=0.8))
    llm_server.reply_text("done")
    source.send_message("think")
    runner = RunThread(source)
    runner.start()
    deadline = time.monotonic() + 10
    while not llm_server.requests and time.monotonic() < deadline:
        time.sleep(0.01)
    fork = source.fork()
    runner.join(10)
    assert runner.error is None
    kinds = [type(e).__name__ for e in fork.state.events]
    assert kinds.count("ActionEvent") == kinds.count("ObservationEvent") == 1  # a whole step
    assert fork.state.execution_status is Status.IDLE
    assert fork.state.get_unmatched_actions(fork.state.active_branch()) == []
    assert_is_tree(list(fork.state.events))


def test_a_taken_id_is_refused_and_nothing_is_made(
    open_conversation: Factory, llm_server: ScriptedLLMServer, persistence_dir: Path
) -> None:
    source = open_conversation()
    other = open_conversation()
    turns(source, llm_server, "one")
    other.send_message("the other one")
    before = saved_ids(persistence_dir)
    for taken in (source.id, other.id):
        with pytest.raises(ConversationIdTakenError, match=taken.hex):
            source.fork(conversation_id=taken)
    assert saved_ids(persistence_dir) == before
    assert [e.llm_message.text for e in other.state.events if isinstance(e, MessageEvent)] == [
        "the other one"
    ]


def test_an_unknown_from_event_id_is_refused_before_anything_is_made(
    open_conversation: Factory, llm_server: ScriptedLLMServer, persistence_dir: Path
) -> None:
    source = open_conversation()
    turns(source, llm_server, "one")
    before = saved_ids(persistence_dir)
    wanted = uuid.uuid4()
    with pytest.raises(ValueError, match="Unknown from_event_id: nope"):
        source.fork(conversation_id=wanted, from_event_id="nope")
    assert saved_ids(persistence_dir) == before
    assert not (persistence_dir / wanted.hex).exists()


def test_forks_made_while_another_thread_appends_are_each_a_consistent_tree(
    open_conversation: Factory, llm_server: ScriptedLLMServer
) -> None:
    source = open_conversation()
    source.send_message("start")
    stop = threading.Event()
    errors: list[BaseException] = []

    def append() -> None:
        try:
            for i in range(150):
                source.send_message(f"message {i}")
                if i % 40 == 20:  # a branch now and then
                    source.navigate_to(source.state.active_branch()[-10].id)
        except BaseException as exc:  # handed to the test
            errors.append(exc)
        finally:
            stop.set()

    writer = threading.Thread(target=append, daemon=True)
    writer.start()
    forks = []
    while not stop.is_set() or not forks:
        forks.append(source.fork())
    writer.join(30)
    assert not errors
    source_log = list(source.state.events)
    position = {event.id: i for i, event in enumerate(source_log)}
    for fork in forks:
        log = list(fork.state.events)
        assert ids(log) == ids(source_log[: len(log)])  # a prefix of the source's log
        assert_is_tree(log)
        leaf = fork.state.leaf_event_id
        assert leaf in position
        assert ids(fork.state.active_branch()) == walk_to_root(log, leaf)
    assert len(forks) > 1


def test_an_in_memory_fork_copies_events_as_saved_never_the_live_tools(
    open_conversation: Factory, llm_server: ScriptedLLMServer
) -> None:
    source = open_conversation(persistence_dir=None)
    llm_server.reply_tool_call("terminal", {"command": "echo from-source"})
    llm_server.reply_text("done")
    source.send_message("run it")
    source.run()
    live = source.state.events[0]
    assert isinstance(live, SystemPromptEvent)

    fork = source.fork(title="copy")  # failed before: the live shell was deep-copied
    copied = fork.state.events[0]
    assert isinstance(copied, SystemPromptEvent)
    assert copied.tool_names == live.tool_names
    assert all(t.executor is None for t in copied.tools)  # what the model was offered
    assert [e.id for e in fork.state.events] == [e.id for e in source.state.events]

    llm_server.reply_tool_call("terminal", {"command": "echo from-fork"})
    llm_server.reply_text("done")
    fork.send_message("run another")
    fork.run()
    assert "from-fork" in " ".join(str(e) for e in fork.state.events)
    assert "from-fork" not in " ".join(str(e) for e in source.state.events)


def test_a_deep_copy_of_a_live_tool_shares_its_executor(
    open_conversation: Factory, llm_server: ScriptedLLMServer
) -> None:
    conv = open_conversation()
    llm_server.reply_text("hi")
    conv.send_message("hi")
    conv.run()
    [prompt] = [e for e in conv.state.events if isinstance(e, SystemPromptEvent)]
    copy = prompt.model_copy(deep=True)
    terminal = conv.agent.tools_map["terminal"]
    [copied] = [t for t in copy.tools if t.name == "terminal"]
    assert copied is not terminal and copied.executor is terminal.executor
