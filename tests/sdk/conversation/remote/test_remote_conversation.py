"""RemoteConversation against the in-repo fake agent server replaying recorded frames
(statements 1-18 of the protocol notes, without the real server)."""

from __future__ import annotations

import threading
import time
import uuid
import warnings
from collections.abc import Iterator
from typing import Any

import pytest
from fake_agent_server import FakeAgentServer
from pydantic import SecretStr

import ohtui.sdk.conversation.impl.remote_conversation as remote_module
from ohtui.sdk import (
    LLM,
    Agent,
    Conversation,
    ConversationExecutionStatus,
    ConversationRunError,
    LLMStreamChunk,
    Message,
    MessageEvent,
    RemoteAuthenticationError,
    RemoteConnectionError,
    RemoteConversation,
    RemoteServerError,
    RemoteWorkspace,
    TextContent,
    Tool,
    WebSocketConnectionError,
)
from ohtui.sdk.conversation.impl.websocket_client import SocketStatus
from ohtui.sdk.event import Event

Status = ConversationExecutionStatus


@pytest.fixture
def agent() -> Agent:
    llm = LLM(
        model="openai/test-model",
        base_url="http://127.0.0.1:9/v1",
        api_key=SecretStr("sk-test"),
        usage_id="agent",
    )
    return Agent(llm=llm, tools=[Tool(name="terminal")])


@pytest.fixture
def fake() -> Iterator[FakeAgentServer]:
    with FakeAgentServer() as server:
        yield server


def connect(
    fake: FakeAgentServer, agent: Agent, key: str | None = "fake-key", **kwargs: Any
) -> RemoteConversation:
    workspace = RemoteWorkspace(host=fake.url, api_key=key, working_dir="/tmp")
    kwargs.setdefault("visualizer", None)
    kwargs.setdefault("reconnect_backoff", 0.05)
    conversation = Conversation(agent, workspace=workspace, autotitle=False, **kwargs)
    assert isinstance(conversation, RemoteConversation)
    return conversation


def wait(predicate: Any, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.02)


def test_factory_creates_with_the_openhands_payload(fake: FakeAgentServer, agent: Agent) -> None:
    with connect(fake, agent) as conversation:
        method, path, body = fake.requests[0]
        assert (method, path) == ("POST", "/api/conversations")
        assert body["agent"]["kind"] == "Agent"
        assert body["agent"]["llm"]["usage_id"] == "agent"
        assert body["agent"]["tools"] == [{"name": "terminal", "params": {}}]
        assert body["workspace"] == {"working_dir": "/tmp"}
        assert (body["max_iterations"], body["stuck_detection"], body["autotitle"]) == (
            500,
            True,
            False,
        )
        assert conversation.id == uuid.UUID(fake.only().id)
        assert not {"tags", "user_id", "observability_span_name"} & body.keys()


def test_tags_user_and_span_name_go_with_a_new_conversation(
    fake: FakeAgentServer, agent: Agent
) -> None:
    extra = {"tags": {"automationid": "auto-1"}, "user_id": "user-42"}
    with connect(fake, agent, observability_span_name="review", **extra):
        method, path, body = fake.requests[0]
        assert (method, path) == ("POST", "/api/conversations")  # the first request
        assert (body["tags"], body["user_id"]) == (extra["tags"], "user-42")
        assert body["observability_span_name"] == "review"


def test_socket_authenticates_in_its_first_frame(fake: FakeAgentServer, agent: Agent) -> None:
    with connect(fake, agent) as conversation:
        assert fake.first_frames == [{"type": "auth", "session_api_key": "fake-key"}]
        assert "fake-key" not in fake.socket_urls[0]
        path, _, query = fake.socket_urls[0].partition("?")
        assert path.endswith(f"/sockets/events/{conversation.id}")
        assert query == "ohtui_fields=true"  # ohtui's event fields, where the server has them


def test_a_create_answer_without_id_is_an_error(fake: FakeAgentServer, agent: Agent) -> None:
    fake.omit_id_on_create = True
    with pytest.raises(RuntimeError, match="did not say its id"):
        connect(fake, agent)


def test_attach_by_id_gets_first_and_posts_nothing(fake: FakeAgentServer, agent: Agent) -> None:
    first = connect(fake, agent)
    first.close()
    posts = len(fake.paths("POST"))
    again = connect(fake, agent, conversation_id=first.id)
    assert again.id == first.id
    assert len(fake.paths("POST")) == posts  # attached, not created
    again.close()
    wanted = uuid.uuid4()
    made = connect(fake, agent, conversation_id=wanted)  # 404 -> created with that id
    assert made.id == wanted
    assert fake.requests[-0 - 1][0] in ("GET", "POST")
    made.close()


def test_attach_with_another_agent_kind_is_refused(fake: FakeAgentServer, agent: Agent) -> None:
    first = connect(fake, agent)
    first.close()
    fake.only().info["agent"]["kind"] = "CodeActAgent"
    with pytest.raises(ValueError, match="runs a CodeActAgent, not a Agent"):
        connect(fake, agent, conversation_id=first.id)


def test_a_refused_key_is_a_sentence_naming_the_host(fake: FakeAgentServer, agent: Agent) -> None:
    with pytest.raises(RemoteAuthenticationError) as caught:
        connect(fake, agent, key="wrong")
    message = str(caught.value)
    assert f"127.0.0.1:{fake.port}" in message
    assert "refused the session API key" in message
    assert caught.value.status_code == 401


def test_an_unreachable_server_is_a_sentence(agent: Agent) -> None:
    from peer_agent_server import free_port

    workspace = RemoteWorkspace(host=f"127.0.0.1:{free_port()}", working_dir="/tmp")
    with pytest.raises(RemoteConnectionError, match="Cannot reach the agent server at 127"):
        Conversation(agent, workspace=workspace, visualizer=None)


def test_run_ends_on_the_post_run_snapshot_with_every_event(
    fake: FakeAgentServer, agent: Agent
) -> None:
    seen: list[Event] = []
    with connect(fake, agent, callbacks=[seen.append]) as conversation:
        conversation.send_message("Say hello")
        conversation.run(poll_interval=0.1)
        assert conversation.state.execution_status is Status.FINISHED
        history = [e["id"] for e in fake.only().history]
        assert [e.id for e in conversation.state.events] == history
        final = conversation.state.events[-2]
        assert isinstance(final, MessageEvent)
        assert final.llm_message.text == "Hello from the agent."
        delivered = [e.id for e in seen if e.id in set(history)]
        assert sorted(delivered) == sorted(history)  # each once
        assert fake.paths("POST")[-1].endswith("/run")


def test_send_message_posts_without_running(fake: FakeAgentServer, agent: Agent) -> None:
    with connect(fake, agent) as conversation:
        conversation.send_message("plain")
        conversation.send_message(Message(role="user", content=[TextContent(text="object")]))
        bodies = [b for m, p, b in fake.requests if p.endswith("/events")]
        assert [b["content"][0]["text"] for b in bodies] == ["plain", "object"]
        assert all(b["role"] == "user" and b["run"] is False for b in bodies)
        count = len(fake.requests)
        with pytest.raises(ValueError, match="user messages"):
            conversation.send_message(Message(role="assistant", content=[TextContent(text="x")]))
        assert len(fake.requests) == count  # refused before any request


def test_a_stale_snapshot_does_not_end_the_run(fake: FakeAgentServer, agent: Agent) -> None:
    fake.stale_snapshot_on_run = True
    fake.frame_delay = 0.05
    with connect(fake, agent) as conversation:
        conversation.run(poll_interval=0.1)
        kinds = [e.kind for e in conversation.state.events]
        assert kinds.count("MessageEvent") == 2  # the reply is there: the real end was waited


def test_run_non_blocking_returns_at_once(fake: FakeAgentServer, agent: Agent) -> None:
    fake.frame_delay = 0.2
    with connect(fake, agent) as conversation:
        started = time.monotonic()
        conversation.run(blocking=False)
        assert time.monotonic() - started < 0.5
        assert len(conversation.state.events) < len(fake.only().script)


def test_run_while_running_tolerates_409(fake: FakeAgentServer, agent: Agent) -> None:
    fake.frame_delay = 0.05
    with connect(fake, agent) as conversation:
        conversation.run(blocking=False)
        conversation.run(poll_interval=0.1)  # 409: waits for the run going on
        assert conversation.state.execution_status is Status.FINISHED
        assert fake.only().run_posts == 1


def test_run_error_carries_code_and_detail(agent: Agent) -> None:
    with FakeAgentServer("error") as fake, connect(fake, agent) as conversation:
        with pytest.raises(ConversationRunError) as caught:
            conversation.run(poll_interval=0.1)
        assert "LLMBadRequestError: litellm.BadRequestError" in str(caught.value)
        assert caught.value.conversation_error is not None


def test_stuck_ends_the_run_in_an_error(fake: FakeAgentServer, agent: Agent) -> None:
    for frame in fake.recording["frames"]:
        if frame.get("key") == "execution_status" and frame["value"] == "finished":
            frame["value"] = "stuck"
    with connect(fake, agent) as conversation, pytest.raises(ConversationRunError, match="stuck"):
        conversation.run(poll_interval=0.1)


def test_404_while_polling_ends_the_run(fake: FakeAgentServer, agent: Agent) -> None:
    fake.never_end = True
    fake.poll_404_after_run = True
    with connect(fake, agent) as conversation, pytest.raises(ConversationRunError, match="404"):
        conversation.run(poll_interval=0.1)


def test_timeout_wraps_a_timeout_error(fake: FakeAgentServer, agent: Agent) -> None:
    fake.never_end = True
    with connect(fake, agent) as conversation:
        with pytest.raises(ConversationRunError) as caught:
            conversation.run(poll_interval=0.1, timeout=0.6)
        assert isinstance(caught.value.original_exception, TimeoutError)


def test_rest_status_alone_ends_the_run_after_the_fallback(
    fake: FakeAgentServer, agent: Agent, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(remote_module, "REST_FINISHED_FALLBACK", 0.5)
    fake.recording["frames"] = [
        f for i, f in enumerate(fake.recording["frames"]) if i == 0 or f.get("key") != "full_state"
    ]
    with connect(fake, agent) as conversation:
        started = time.monotonic()
        conversation.run(poll_interval=0.1)  # no snapshot ever: the REST status decides
        assert time.monotonic() - started >= 0.5
        assert conversation.state.refresh_from_server()["execution_status"] == "finished"


def test_reconnect_loses_and_duplicates_nothing(fake: FakeAgentServer, agent: Agent) -> None:
    fake.drop_after_frames = 2
    statuses: list[SocketStatus] = []
    seen: list[Event] = []
    with connect(
        fake, agent, callbacks=[seen.append], connection_callbacks=[lambda s, r: statuses.append(s)]
    ) as conversation:
        conversation.run(poll_interval=0.1)
        history = [e["id"] for e in fake.only().history]
        assert [e.id for e in conversation.state.events] == history
        delivered = [e.id for e in seen if e.id in set(history)]
        assert sorted(delivered) == sorted(history)  # each exactly once
        assert SocketStatus.RECONNECTING in statuses
        assert statuses[-1] is SocketStatus.CONNECTED
        assert len(fake.first_frames) == 2  # authenticated again


@pytest.mark.parametrize("code", [4001, 4004])
def test_fatal_close_codes_stop_retrying(fake: FakeAgentServer, agent: Agent, code: int) -> None:
    fake.close_code = code
    with pytest.raises(RemoteServerError) as caught:
        connect(fake, agent)
    assert caught.value.status_code == (401 if code == 4001 else 404)
    time.sleep(0.3)
    assert len(fake.first_frames) == 1  # no retry


def test_other_closes_retry_with_backoff(fake: FakeAgentServer, agent: Agent) -> None:
    with connect(fake, agent) as conversation:
        fake.drop_sockets()
        wait(lambda: len(fake.first_frames) >= 2)
        wait(lambda: conversation.connection_status is SocketStatus.CONNECTED)


def test_no_first_frame_in_time_raises(
    fake: FakeAgentServer, agent: Agent, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake.send_first_frame = False
    monkeypatch.setenv("OPENHANDS_REMOTE_WS_READY_TIMEOUT", "0.5")
    with pytest.raises(WebSocketConnectionError, match=r"did not complete within 0\.5 seconds"):
        connect(fake, agent)
    monkeypatch.setenv("OPENHANDS_REMOTE_WS_READY_REQUIRED", "false")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        connect(fake, agent).close()
    assert any("Events may be missed" in str(w.message) for w in caught)


def test_properties_read_the_cache_without_requests(fake: FakeAgentServer, agent: Agent) -> None:
    with connect(fake, agent) as conversation:
        count = len(fake.requests)
        state = conversation.state
        for _ in range(20):
            _ = (state.execution_status, state.confirmation_policy, state.stats, state.title)
            _ = (state.agent, state.workspace, state.persistence_dir)
        assert len(fake.requests) == count


def test_endpoints_of_the_other_operations(fake: FakeAgentServer, agent: Agent) -> None:
    from ohtui.sdk import AlwaysConfirm

    with connect(fake, agent) as conversation:
        conversation.pause()
        conversation.interrupt()
        conversation.set_confirmation_policy(AlwaysConfirm())
        conversation.set_security_analyzer(None)
        conversation.update_secrets({"A": "1", "B": lambda: "2"})
        conversation.reject_pending_actions("no")
        tail = [(p.rsplit("/", 1)[-1], b) for m, p, b in fake.requests if m == "POST"][-6:]
        assert tail == [
            ("pause", None),
            ("interrupt", None),
            ("confirmation_policy", {"policy": {"kind": "AlwaysConfirm"}}),
            ("security_analyzer", {"security_analyzer": None}),
            ("secrets", {"secrets": {"A": "1", "B": "2"}}),
            ("respond_to_confirmation", {"accept": False, "reason": "no"}),
        ]
        assert isinstance(conversation.state.confirmation_policy, AlwaysConfirm)
        with pytest.raises(NotImplementedError):
            conversation.execute_tool("terminal", None)  # type: ignore[arg-type]
        with pytest.raises(NotImplementedError):
            _ = conversation.stuck_detector


def test_partial_rejection_needs_the_capability(fake: FakeAgentServer, agent: Agent) -> None:
    with FakeAgentServer("confirm_reject") as confirm:
        with connect(confirm, agent) as conversation:
            conversation.run(poll_interval=0.1)  # ends waiting for confirmation
            pending = conversation.state.get_unmatched_actions(conversation.state.events)
            assert len(pending) == 1
            count = len(confirm.requests)
            with pytest.raises(ValueError, match="only reject all"):
                conversation.reject_pending_actions("no", action_ids=[])
            assert len(confirm.requests) == count  # nothing sent
            conversation.reject_pending_actions("all", action_ids=[pending[0].id])  # = all
            assert confirm.requests[-1][2] == {"accept": False, "reason": "all"}
        confirm.capabilities = ["per_action_confirmation"]
        with connect(confirm, agent) as conversation:
            assert conversation.supports_partial_rejection
            conversation.run(poll_interval=0.1)
            conversation.reject_pending_actions("none of them", action_ids=[])
            assert confirm.requests[-1][2] == {
                "accept": False,
                "reason": "none of them",
                "action_ids": [],
            }


def test_streaming_deltas_go_to_token_callbacks_only(agent: Agent) -> None:
    chunks: list[LLMStreamChunk] = []
    with (
        FakeAgentServer("streaming") as fake,
        connect(fake, agent, token_callbacks=[chunks.append]) as conversation,
    ):
        conversation.run(poll_interval=0.1)
        assert "".join(c.content for c in chunks) == "Streamed words arrive one by one."
        assert "StreamingDeltaEvent" not in {e.kind for e in conversation.state.events}


def test_set_title_patches_and_notifies(fake: FakeAgentServer, agent: Agent) -> None:
    seen: list[Event] = []
    with connect(fake, agent, callbacks=[seen.append]) as conversation:
        conversation.set_title("  New name ")
        assert ("PATCH", {"title": "New name"}) in [(m, b) for m, _, b in fake.requests]
        assert conversation.state.title == "New name"
        assert any(getattr(e, "key", None) == "title" for e in seen)
        with pytest.raises(ValueError):
            conversation.set_title(" ")


def test_close_is_idempotent_and_deletes_only_when_asked(
    fake: FakeAgentServer, agent: Agent
) -> None:
    before = threading.active_count()
    kept = connect(fake, agent)
    started = time.monotonic()
    kept.close()
    kept.close()
    assert time.monotonic() - started < 5
    assert "DELETE" not in [m for m, _, _ in fake.requests]
    gone = connect(fake, agent, delete_on_close=True)
    gone.close()
    assert [m for m, _, _ in fake.requests].count("DELETE") == 1
    assert not kept.workspace.client.is_closed  # type: ignore[attr-defined]
    wait(lambda: threading.active_count() <= before)
    with pytest.raises(RuntimeError, match="closed"):
        kept.send_message("late")


def test_a_server_without_checkpoints_says_so_in_words(fake: FakeAgentServer, agent: Agent) -> None:
    """An OpenHands agent server keeps no checkpoints and has no routes for them."""
    from ohtui.sdk import CheckpointError

    with connect(fake, agent) as conversation:
        assert conversation.list_checkpoints() == [] and conversation.undo_checkpoint() is None
        assert not conversation.supports_checkpoints
        with pytest.raises(CheckpointError, match=r"^this server keeps no checkpoints \("):
            conversation.restore_checkpoint()
        with pytest.raises(CheckpointError, match="keeps no checkpoints"):
            conversation.checkpoint_changes("abcd1234")
