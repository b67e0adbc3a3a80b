"""Our RemoteConversation against the real openhands-agent-server 1.58 (opt-in: `peer`).

Run with OHTUI_PEER_PYTHON=/path/to/v312/bin/python (scripts/peer-agent-server.sh builds it).
"""

from __future__ import annotations

import os
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from llm_server import Reply, ScriptedLLMServer
from peer_agent_server import PEER_ENV, PeerServer, peer_agent_server
from pydantic import SecretStr

from ohtui.sdk import (
    LLM,
    Agent,
    AlwaysConfirm,
    Conversation,
    ConversationExecutionStatus,
    ConversationRunError,
    LLMStreamChunk,
    MessageEvent,
    RemoteAuthenticationError,
    RemoteConversation,
    RemoteServerError,
    RemoteWorkspace,
    Tool,
    UserRejectObservation,
)
from ohtui.sdk.event import ActionEvent, Event, ObservationEvent
from ohtui.sdk.wire.foreign import ForeignEvent

pytestmark = [
    pytest.mark.peer,
    pytest.mark.skipif(not os.environ.get(PEER_ENV), reason=f"needs {PEER_ENV}"),
]
Status = ConversationExecutionStatus


@pytest.fixture(scope="module")
def peer() -> Iterator[PeerServer]:
    with peer_agent_server(os.environ[PEER_ENV]) as server:
        yield server


@pytest.fixture(scope="module")
def llm_server() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer() as server:
        yield server


def make_agent(llm_server: ScriptedLLMServer, *, stream: bool = False) -> Agent:
    llm = LLM(
        model="openai/test-model",
        base_url=llm_server.base_url,
        api_key=SecretStr("sk-test"),
        usage_id="agent",
        num_retries=0,
        stream=stream,
    )
    return Agent(llm=llm, tools=[Tool(name="terminal")])


def open_conversation(
    peer: PeerServer, llm_server: ScriptedLLMServer, **kwargs: Any
) -> RemoteConversation:
    workspace = RemoteWorkspace(
        host=peer.url, api_key=peer.api_key, working_dir=str(peer.workspace)
    )
    stream = kwargs.pop("stream", False)
    conversation = Conversation(
        make_agent(llm_server, stream=stream),
        workspace=workspace,
        autotitle=False,
        visualizer=None,
        **kwargs,
    )
    assert isinstance(conversation, RemoteConversation)
    return conversation


def server_ids(conversation: RemoteConversation) -> list[str]:
    client = conversation.workspace.client  # type: ignore[attr-defined]
    body = client.get(f"/api/conversations/{conversation.id}/events/search?limit=100").json()
    return [item["id"] for item in body["items"]]


def test_create_send_run_to_finished(peer: PeerServer, llm_server: ScriptedLLMServer) -> None:
    seen: list[Event] = []
    llm_server.reply_text("Hello from the peer.")
    with open_conversation(peer, llm_server, callbacks=[seen.append]) as conversation:
        conversation.send_message("Say hello")
        conversation.run()
        assert conversation.state.execution_status is Status.FINISHED
        messages = [e for e in conversation.state.events if isinstance(e, MessageEvent)]
        assert [m.llm_message.text for m in messages][-1] == "Hello from the peer."
        ids = [e.id for e in conversation.state.events]
        assert ids == server_ids(conversation)  # same ids, same order, no duplicates
        assert any(isinstance(e, MessageEvent) and e.source == "agent" for e in seen)
        assert conversation.state.stats.usage_to_metrics["agent"].call_count == 1
        assert conversation.supports_partial_rejection is False  # OpenHands' server


def test_attach_by_id_and_create_with_a_given_id(
    peer: PeerServer, llm_server: ScriptedLLMServer
) -> None:
    llm_server.reply_text("First.")
    first = open_conversation(peer, llm_server)
    first.send_message("hi")
    first.run()
    first.close()
    again = open_conversation(peer, llm_server, conversation_id=first.id)
    assert again.id == first.id
    assert [e.id for e in again.state.events] == server_ids(first)
    again.close()
    wanted = uuid.uuid4()
    fresh = open_conversation(peer, llm_server, conversation_id=wanted, delete_on_close=True)
    assert fresh.id == wanted
    fresh.close()


def test_streaming_deltas_reach_token_callbacks(
    peer: PeerServer, llm_server: ScriptedLLMServer
) -> None:
    chunks: list[LLMStreamChunk] = []
    llm_server.reply_text("Streamed words arrive.", chunk_delay=0.01)
    with open_conversation(peer, llm_server, stream=True, token_callbacks=[chunks.append]) as c:
        c.send_message("stream")
        c.run()
        assert "".join(ch.content for ch in chunks) == "Streamed words arrive."
        assert all(e.kind != "StreamingDeltaEvent" for e in c.state.events)


def test_confirm_and_reject_all(peer: PeerServer, llm_server: ScriptedLLMServer) -> None:
    with open_conversation(peer, llm_server) as conversation:
        conversation.set_confirmation_policy(AlwaysConfirm())
        assert isinstance(conversation.state.confirmation_policy, AlwaysConfirm)
        llm_server.reply_tool_call("terminal", {"command": "echo one"})
        conversation.send_message("run echo one")
        conversation.run()
        assert conversation.state.execution_status is Status.WAITING_FOR_CONFIRMATION
        pending = conversation.state.get_unmatched_actions(conversation.state.events)
        assert len(pending) == 1
        with pytest.raises(ValueError, match="only reject all"):
            conversation.reject_pending_actions("no", action_ids=[])
        conversation.reject_pending_actions("not now")
        _wait(lambda: any(isinstance(e, UserRejectObservation) for e in conversation.state.events))
        llm_server.reply_tool_call("terminal", {"command": "echo two"})
        llm_server.reply_text("Done: two.")
        conversation.send_message("then echo two")
        conversation.run()
        assert conversation.state.execution_status is Status.WAITING_FOR_CONFIRMATION
        conversation.run()  # runs the waiting action: confirming it
        assert conversation.state.execution_status is Status.FINISHED
        results = [e for e in conversation.state.events if isinstance(e, ObservationEvent)]
        assert results and "two" in results[-1].observation.text


def test_pause_and_interrupt(peer: PeerServer, llm_server: ScriptedLLMServer) -> None:
    llm_server.reply(Reply(text="slow", delay=4))
    with open_conversation(peer, llm_server) as conversation:
        conversation.send_message("take your time")
        conversation.run(blocking=False)
        _wait(lambda: conversation.state.execution_status is Status.RUNNING)
        started = time.monotonic()
        conversation.interrupt()
        _wait(lambda: conversation.state.execution_status is Status.PAUSED)
        assert time.monotonic() - started < 3
        _wait(lambda: any(_is_interrupt(e) for e in conversation.state.events))
        conversation.pause()  # paused already: accepted


def test_secrets_ask_agent_title_condense(peer: PeerServer, llm_server: ScriptedLLMServer) -> None:
    with open_conversation(peer, llm_server) as conversation:
        conversation.update_secrets({"TOKEN": "s3cret-value", "LATER": lambda: "from-callable"})
        llm_server.reply_tool_call("terminal", {"command": "echo $TOKEN-$LATER | rev"})
        llm_server.reply_text("Echoed.")
        conversation.send_message("echo the secrets")
        conversation.run()
        result = [e for e in conversation.state.events if isinstance(e, ObservationEvent)][-1]
        assert "elballac-morf-eulav-terc3s" in result.observation.text  # both reached the shell
        llm_server.reply_text("Because.")
        assert conversation.ask_agent("why?") == "Because."
        llm_server.reply_text("First.")
        conversation.send_message("Please fix the login bug")
        conversation.run()
        llm_server.reply_text("Login bug fix")
        assert conversation.generate_title() == "Login bug fix"
        assert conversation.state.refresh_from_server()["title"] == "Login bug fix"
        conversation.set_title("Renamed")
        assert conversation.state.title == "Renamed"
        with pytest.raises(RemoteServerError) as caught:
            conversation.condense()
        assert caught.value.status_code == 409
        assert "No condenser configured" in str(caught.value)


def test_run_error_carries_the_servers_code(
    peer: PeerServer, llm_server: ScriptedLLMServer
) -> None:
    llm_server.reply_error(400, "the scripted model refuses")
    with open_conversation(peer, llm_server) as conversation:
        conversation.send_message("fail")
        with pytest.raises(ConversationRunError, match="LLMBadRequestError: "):
            conversation.run()


def test_close_deletes_only_when_asked(peer: PeerServer, llm_server: ScriptedLLMServer) -> None:
    kept = open_conversation(peer, llm_server)
    kept.close()
    kept.close()  # idempotent
    client = kept.workspace.client  # type: ignore[attr-defined]
    assert client.get(f"/api/conversations/{kept.id}").status_code == 200
    gone = open_conversation(peer, llm_server, delete_on_close=True)
    gone.close()
    assert client.get(f"/api/conversations/{gone.id}").status_code == 404
    assert not client.is_closed  # the workspace's client stays open


def test_a_wrong_key_is_a_sentence(peer: PeerServer, llm_server: ScriptedLLMServer) -> None:
    workspace = RemoteWorkspace(host=peer.url, api_key="wrong-key", working_dir="/tmp")
    with pytest.raises(RemoteAuthenticationError, match=r"refused the session API key"):
        Conversation(make_agent(llm_server), workspace=workspace, visualizer=None)


def test_threads_end_on_close(peer: PeerServer, llm_server: ScriptedLLMServer) -> None:
    before = {t.name for t in threading.enumerate()}
    conversation = open_conversation(peer, llm_server)
    conversation.close()
    _wait(lambda: {t.name for t in threading.enumerate()} <= before)


def _is_interrupt(event: Event) -> bool:
    """An InterruptEvent (ours, or a stand-in for theirs)."""
    return event.kind == "InterruptEvent" or (
        isinstance(event, ForeignEvent) and event.foreign_kind == "InterruptEvent"
    )


def _wait(predicate: Any, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.05)


def test_actions_have_our_types(peer: PeerServer, llm_server: ScriptedLLMServer) -> None:
    llm_server.reply_tool_call("terminal", {"command": "echo typed"})
    llm_server.reply_text("ok")
    with open_conversation(peer, llm_server) as conversation:
        conversation.send_message("echo typed")
        conversation.run()
        actions = [e for e in conversation.state.events if isinstance(e, ActionEvent)]
        assert actions and actions[0].action is not None
        assert actions[0].action.kind == "TerminalAction"


def test_the_openhands_server_keeps_no_checkpoints_and_we_say_so(
    peer: PeerServer, llm_server: ScriptedLLMServer
) -> None:
    from ohtui.sdk import CheckpointError

    llm_server.reply_tool_call("terminal", {"command": "echo x > peer-undo.txt"})
    llm_server.reply_text("Wrote it.")
    with open_conversation(peer, llm_server) as conversation:
        conversation.send_message("write a file")
        conversation.run()
        assert (peer.workspace / "peer-undo.txt").exists()
        assert conversation.list_checkpoints() == [] and conversation.undo_checkpoint() is None
        with pytest.raises(CheckpointError, match=r"^this server keeps no checkpoints \("):
            conversation.restore_checkpoint()
        with pytest.raises(CheckpointError, match="keeps no checkpoints"):
            conversation.checkpoint_diff("abcd1234")
        assert (peer.workspace / "peer-undo.txt").exists()


# --- the conversation tree: fork and navigate --------------------------------------------


def _texts(events: Any) -> list[str]:
    return [e.llm_message.text for e in events if isinstance(e, MessageEvent)]


def _said_to_llm(llm_server: ScriptedLLMServer) -> list[str]:
    """The messages (but the system prompt) of the last request the LLM got."""
    said = []
    for message in llm_server.requests[-1]["messages"][1:]:
        content = message["content"]
        said.append(content if isinstance(content, str) else content[0]["text"])
    return said


def _turn(conversation: RemoteConversation, llm_server: ScriptedLLMServer, ask: str) -> None:
    llm_server.reply_text(f"Answer to {ask}.")
    conversation.send_message(ask)
    conversation.run()
    assert conversation.state.execution_status is Status.FINISHED


def _nodes(events: Any) -> list[str]:
    """The ids of the events of the tree (not the state-sync ones)."""
    return [e.id for e in events if e.kind != "ConversationStateUpdateEvent"]


def test_fork_whole_and_at_an_event_on_the_openhands_server(
    peer: PeerServer, llm_server: ScriptedLLMServer
) -> None:
    with open_conversation(peer, llm_server, tags={"team": "blue"}) as source:
        _turn(source, llm_server, "one")
        _turn(source, llm_server, "two")
        whole = source.fork(title="Copy", tags={"topic": "copy"})
        answer = next(e for e in source.state.events if _texts([e]) == ["Answer to one."])
        branch = source.fork(from_event_id=answer.id, reset_metrics=False)
        try:
            assert source.id not in (whole.id, branch.id)
            assert _nodes(whole.state.events) == _nodes(source.state.events)
            assert whole.state.leaf_event_id == source.state.leaf_event_id
            assert whole.state.title == "Copy"
            assert whole.state.info["tags"] == {"topic": "copy"}  # the title is not a tag
            assert whole.state.info["forked_from_conversation_id"] == str(source.id)
            assert whole.state.info["forked_from_event_id"] is None
            assert whole.state.execution_status is Status.IDLE
            assert whole.state.stats.usage_to_metrics == {}  # fresh metrics

            assert branch.state.leaf_event_id == answer.id
            assert _texts(branch.state.active_branch()) == ["one", "Answer to one."]
            assert branch.state.info["forked_from_event_id"] == answer.id
            assert branch.state.title is None  # OpenHands: no title unless one is given
            assert branch.state.info["tags"] == {}  # nor the source's tags
            assert branch.state.stats.usage_to_metrics["agent"].call_count == 2
            _turn(branch, llm_server, "three")
            assert _said_to_llm(llm_server) == ["one", "Answer to one.", "three"]
            assert _texts(branch.state.active_branch())[-1] == "Answer to three."
            assert branch.state.leaf_event_id == branch.state.active_branch()[-1].id
        finally:
            whole.close()
            branch.close()


def test_fork_and_navigate_errors_on_the_openhands_server(
    peer: PeerServer, llm_server: ScriptedLLMServer
) -> None:
    source = open_conversation(peer, llm_server)
    gone = open_conversation(peer, llm_server)
    try:
        with pytest.raises(ValueError, match="already exists"):
            source.fork(conversation_id=gone.id)
        with pytest.raises(ValueError, match="Unknown from_event_id: no-such-event"):
            source.fork(from_event_id="no-such-event")  # 404 there (400 from ohtui serve)
        with pytest.raises(ValueError, match="Unknown event_id: no-such-event"):
            source.navigate_to("no-such-event")
        client = source.workspace.client  # type: ignore[attr-defined]
        assert client.delete(f"/api/conversations/{gone.id}").status_code == 200
        with pytest.raises(RemoteServerError) as refused:
            gone.fork(from_event_id="no-such-event")
        assert refused.value.status_code == 404
        with pytest.raises(RemoteServerError) as refused:
            gone.navigate_to(None)
        assert refused.value.status_code == 404
    finally:
        source.close()
        gone.close()


def test_navigate_then_a_message_grows_a_sibling_on_the_openhands_server(
    peer: PeerServer, llm_server: ScriptedLLMServer
) -> None:
    with open_conversation(peer, llm_server) as conversation:
        _turn(conversation, llm_server, "one")
        _turn(conversation, llm_server, "two")
        answer = next(e for e in conversation.state.events if _texts([e]) == ["Answer to one."])
        two = next(e for e in conversation.state.events if _texts([e]) == ["two"])
        conversation.navigate_to(answer.id)
        assert conversation.state.leaf_event_id == answer.id
        assert _texts(conversation.state.active_branch()) == ["one", "Answer to one."]

        _turn(conversation, llm_server, "two again")
        assert _said_to_llm(llm_server) == ["one", "Answer to one.", "two again"]
        branch = conversation.state.active_branch()
        assert _texts(branch) == ["one", "Answer to one.", "two again", "Answer to two again."]
        assert conversation.state.leaf_event_id == branch[-1].id
        again = next(e for e in branch if _texts([e]) == ["two again"])
        assert again.parent_id == answer.id == two.parent_id
        assert _texts(conversation.state.events).count("two") == 1  # the old branch stays
        assert conversation.state.refresh_from_server()["leaf_event_id"] == branch[-1].id

        conversation.navigate_to(None)
        assert conversation.state.leaf_event_id is None
        assert list(conversation.state.active_branch()) == []
