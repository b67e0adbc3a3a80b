"""Our RemoteConversation's `fork` and `navigate_to` against our own `ohtui serve`, over real
HTTP and WebSockets: the copies, the errors a caller gets, HEAD and the active branch on the
client as the server moves them, and a fork that outlives a restart of the server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from llm_server import ScriptedLLMServer
from serve_helpers import attach, wait
from server_process import ServerProcess

from ohtui.sdk import (
    ConversationExecutionStatus,
    MessageEvent,
    RemoteConversation,
    RemoteServerError,
)
from ohtui.sdk.event import ConversationStateUpdateEvent, Event

Status = ConversationExecutionStatus


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = ServerProcess(tmp_path_factory.mktemp("serve")).start()
    try:
        yield process
    finally:
        process.stop()


def nodes(events: Any) -> list[Event]:
    """The events of the tree (per-field state updates are sync, not history)."""
    return [e for e in events if not isinstance(e, ConversationStateUpdateEvent)]


def texts(events: Any) -> list[str]:
    return [e.llm_message.text for e in events if isinstance(e, MessageEvent)]


def said_to_llm(llm: ScriptedLLMServer) -> list[str]:
    """The messages (but the system prompt) of the last request the LLM got."""
    said = []
    for message in llm.requests[-1]["messages"][1:]:
        content = message["content"]
        said.append(content if isinstance(content, str) else content[0]["text"])
    return said


def turn(conversation: RemoteConversation, llm: ScriptedLLMServer, ask: str, answer: str) -> None:
    llm.reply_text(answer)
    conversation.send_message(ask)
    conversation.run()
    assert conversation.state.execution_status is Status.FINISHED


def two_turns(
    server: ServerProcess, llm: ScriptedLLMServer, workspace: Path, **kwargs: Any
) -> RemoteConversation:
    conversation = attach(server, llm, workspace, **kwargs)
    turn(conversation, llm, "first question", "First answer.")
    turn(conversation, llm, "second question", "Second answer.")
    return conversation


def test_a_fork_of_everything_and_one_at_an_event_with_title_and_tags(
    served: ServerProcess, llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    source = two_turns(served, llm_server, tmp_path)
    whole = source.fork(title="Copy", tags={"topic": "copy"})
    first_answer = next(e for e in source.state.events if texts([e]) == ["First answer."])
    branch = source.fork(from_event_id=first_answer.id, reset_metrics=False)
    try:
        assert source.id not in (whole.id, branch.id)
        assert [e.id for e in nodes(whole.state.events)] == [
            e.id for e in nodes(source.state.events)
        ]
        assert whole.state.leaf_event_id == source.state.leaf_event_id
        assert whole.state.title == "Copy"
        assert whole.state.info["tags"] == {"topic": "copy"}
        assert whole.state.info["forked_from_conversation_id"] == str(source.id)
        assert whole.state.execution_status is Status.IDLE
        assert whole.state.stats.usage_to_metrics["agent"].call_count == 0

        assert branch.state.leaf_event_id == first_answer.id
        assert texts(branch.state.active_branch()) == ["first question", "First answer."]
        assert branch.state.info["forked_from_event_id"] == first_answer.id
        assert branch.state.stats.usage_to_metrics["agent"].call_count == 2

        turn(branch, llm_server, "another second question", "Another answer.")
        assert said_to_llm(llm_server) == [
            "first question",
            "First answer.",
            "another second question",
        ]
        assert texts(branch.state.active_branch())[-1] == "Another answer."
        assert texts(source.state.active_branch())[-1] == "Second answer."  # untouched
    finally:
        for conversation in (whole, branch, source):
            conversation.close()


def test_fork_and_navigate_errors_are_a_value_error_or_the_servers_refusal(
    served: ServerProcess, llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    source = attach(served, llm_server, tmp_path)
    other = attach(served, llm_server, tmp_path)
    try:
        with pytest.raises(ValueError, match="already exists"):
            source.fork(conversation_id=other.id)
        with pytest.raises(ValueError, match="Unknown from_event_id: no-such-event"):
            source.fork(from_event_id="no-such-event")
        with pytest.raises(ValueError, match="Unknown event_id: no-such-event"):
            source.navigate_to("no-such-event")
        with pytest.raises(NotImplementedError):
            source.fork(agent=source.agent)
        client = source.workspace.client  # type: ignore[attr-defined]
        assert client.delete(f"/api/conversations/{other.id}").status_code == 200
        with pytest.raises(RemoteServerError) as gone:
            other.fork(from_event_id="no-such-event")
        assert gone.value.status_code == 404
        with pytest.raises(RemoteServerError) as gone:
            other.navigate_to(None)
        assert gone.value.status_code == 404
    finally:
        source.close()
        other.close()


def test_navigate_then_a_message_grows_a_sibling_branch_seen_by_every_client(
    served: ServerProcess, llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    conversation = attach(served, llm_server, tmp_path)
    turn(conversation, llm_server, "first question", "First answer.")
    # Attached before the second turn: it hears that turn's events, then the move of HEAD.
    watcher = attach(served, llm_server, tmp_path, conversation_id=conversation.id)
    try:
        turn(conversation, llm_server, "second question", "Second answer.")
        wait(lambda: texts(watcher.state.active_branch())[-1:] == ["Second answer."])
        first_answer = next(e for e in conversation.state.events if texts([e]) == ["First answer."])
        second_question = next(
            e for e in conversation.state.events if texts([e]) == ["second question"]
        )
        conversation.navigate_to(first_answer.id)
        assert conversation.state.leaf_event_id == first_answer.id
        assert texts(conversation.state.active_branch()) == ["first question", "First answer."]
        wait(lambda: watcher.state.leaf_event_id == first_answer.id)  # told on the socket
        assert texts(watcher.state.active_branch()) == ["first question", "First answer."]

        turn(conversation, llm_server, "second question, again", "Second answer, again.")
        assert said_to_llm(llm_server) == [
            "first question",
            "First answer.",
            "second question, again",
        ]
        branch = conversation.state.active_branch()
        assert texts(branch) == [
            "first question",
            "First answer.",
            "second question, again",
            "Second answer, again.",
        ]
        assert conversation.state.leaf_event_id == branch[-1].id
        asked_again = next(e for e in branch if texts([e]) == ["second question, again"])
        assert asked_again.parent_id == first_answer.id == second_question.parent_id
        assert len(texts(conversation.state.events)) == 6  # the old branch stays in the log
        wait(lambda: watcher.state.leaf_event_id == branch[-1].id)
        assert [e.id for e in watcher.state.active_branch()] == [e.id for e in branch]

        conversation.navigate_to(None)
        assert conversation.state.leaf_event_id is None
        assert conversation.state.head_is_empty
        assert list(conversation.state.active_branch()) == []
    finally:
        watcher.close()
        conversation.close()


def test_navigate_is_refused_while_the_agent_runs(
    served: ServerProcess, llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    conversation = attach(served, llm_server, tmp_path)
    try:
        llm_server.reply_text("Slowly.", delay=1.5)
        conversation.send_message("take your time")
        conversation.run(blocking=False)
        wait(lambda: conversation.state.execution_status is Status.RUNNING)
        first = conversation.state.events[0].id
        with pytest.raises(RemoteServerError, match="The agent is running") as refused:
            conversation.navigate_to(first)
        assert refused.value.status_code == 409
        wait(lambda: conversation.state.execution_status is Status.FINISHED)
        conversation.navigate_to(first)  # once it stopped, HEAD moves
        assert conversation.state.leaf_event_id == first
    finally:
        conversation.close()


def test_a_fork_is_served_again_after_the_server_restarts(
    llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    first = ServerProcess(tmp_path / "data").start()
    second: ServerProcess | None = None
    try:
        source = two_turns(first, llm_server, workspace)
        first_answer = next(e for e in source.state.events if texts([e]) == ["First answer."])
        fork = source.fork(title="Kept", from_event_id=first_answer.id)
        fork_id, history = fork.id, [e.id for e in nodes(fork.state.events)]
        source.close()
        fork.close()
        first.stop()

        second = ServerProcess(tmp_path / "data", port=first.port).start()
        again = attach(second, llm_server, workspace, conversation_id=fork_id)
        try:
            assert [e.id for e in nodes(again.state.events)] == history
            assert again.state.leaf_event_id == first_answer.id
            assert again.state.title == "Kept"
            assert again.state.info["forked_from_conversation_id"] == str(source.id)
            assert again.state.info["forked_from_event_id"] == first_answer.id
            turn(again, llm_server, "after the restart", "Still here.")
            assert said_to_llm(llm_server) == [
                "first question",
                "First answer.",
                "after the restart",
            ]
        finally:
            again.close()
    finally:
        first.stop()
        if second is not None:
            second.stop()
