"""Our RemoteConversation against our own `ohtui serve`: the TUI's remote path end to end,
over real HTTP and WebSockets, including a server killed (SIGKILL) and restarted mid-run."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from llm_server import Reply, ScriptedLLMServer
from serve_helpers import attach, make_agent, wait
from server_process import ServerProcess
from tcp_proxy import TCPProxy

from ohtui.sdk import (
    AlwaysConfirm,
    Conversation,
    ConversationExecutionStatus,
    LLMStreamChunk,
    MessageEvent,
    PauseEvent,
    RemoteAuthenticationError,
    RemoteConversation,
    RemoteServerError,
    RemoteWorkspace,
    UserRejectObservation,
)
from ohtui.sdk.conversation.impl.websocket_client import SocketStatus
from ohtui.sdk.event import (
    ActionEvent,
    Condensation,
    ConversationStateUpdateEvent,
    Event,
    InterruptEvent,
    ObservationEvent,
)

Status = ConversationExecutionStatus


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = ServerProcess(tmp_path_factory.mktemp("serve")).start()
    try:
        yield process
    finally:
        process.stop()


def history_ids(conversation: RemoteConversation) -> list[str]:
    """The ids of the events the client holds, less the per-field state updates (which our
    server sends, but does not keep as history)."""
    return [
        e.id for e in conversation.state.events if not isinstance(e, ConversationStateUpdateEvent)
    ]


def server_ids(conversation: RemoteConversation) -> list[str]:
    client = conversation.workspace.client  # type: ignore[attr-defined]
    body = client.get(
        f"/api/conversations/{conversation.id}/events/search?limit=100&ohtui_fields=true"
    ).json()
    return [item["id"] for item in body["items"]]


def test_a_turn_runs_on_the_server_and_streams_here(
    served: ServerProcess, llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    seen: list[Event] = []
    chunks: list[LLMStreamChunk] = []
    llm_server.reply_text("Streamed from the dev box.", chunk_delay=0.01)
    with attach(
        served,
        llm_server,
        tmp_path,
        stream=True,
        callbacks=[seen.append],
        token_callbacks=[chunks.append],
    ) as conversation:
        assert conversation.supports_partial_rejection  # ours decides on each action
        conversation.send_message("Say where you run")
        conversation.run()
        assert conversation.state.execution_status is Status.FINISHED
        assert "".join(chunk.content for chunk in chunks) == "Streamed from the dev box."
        replies = [e for e in seen if isinstance(e, MessageEvent) and e.source == "agent"]
        assert [r.llm_message.text for r in replies] == ["Streamed from the dev box."]
        assert history_ids(conversation) == server_ids(conversation)  # same order, no duplicates
        assert conversation.state.stats.usage_to_metrics["agent"].call_count == 1


def test_each_waiting_action_is_decided_apart(
    served: ServerProcess, llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    with attach(served, llm_server, tmp_path) as conversation:
        conversation.set_confirmation_policy(AlwaysConfirm())
        llm_server.reply_tool_calls(
            [
                ("terminal", {"command": "echo kept > kept.txt"}),
                ("terminal", {"command": "echo dropped > dropped.txt"}),
            ]
        )
        llm_server.reply_text("One ran, one was refused.")
        conversation.send_message("write two files")
        conversation.run()
        assert conversation.state.execution_status is Status.WAITING_FOR_CONFIRMATION
        pending = conversation.state.get_unmatched_actions(conversation.state.events)
        assert len(pending) == 2
        dropped = next(a for a in pending if "dropped" in str(a.action))
        conversation.reject_pending_actions("not that one", action_ids=[dropped.id])
        conversation.run()  # approves the other
        assert conversation.state.execution_status is Status.FINISHED
        assert (tmp_path / "kept.txt").read_text() == "kept\n"
        assert not (tmp_path / "dropped.txt").exists()
        rejected = [e for e in conversation.state.events if isinstance(e, UserRejectObservation)]
        assert [r.action_id for r in rejected] == [dropped.id]
        assert rejected[0].rejection_reason == "not that one"


def test_a_run_after_a_rejection_waits_for_its_own_end(
    served: ServerProcess, llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    """The rejection's frames (its event, the idle status) may reach us after the next run
    began: they do not end that run (it ended at once, "idle", while the server ran on)."""
    slow = threading.Event()

    def busy_listener(event: Event) -> None:  # as a busy UI: the socket's frames wait
        if slow.is_set() and isinstance(event, UserRejectObservation):
            time.sleep(1.0)

    with attach(served, llm_server, tmp_path, callbacks=[busy_listener]) as conversation:
        conversation.set_confirmation_policy(AlwaysConfirm())
        llm_server.reply_tool_call("terminal", {"command": "echo hi"})
        llm_server.reply(Reply(text="Not run, then.", delay=2))
        conversation.send_message("echo hi")
        conversation.run()
        assert conversation.state.execution_status is Status.WAITING_FOR_CONFIRMATION
        slow.set()
        conversation.reject_pending_actions("no")
        conversation.run()
        assert conversation.state.execution_status is Status.FINISHED
        replies = [e for e in conversation.state.events if isinstance(e, MessageEvent)]
        assert replies[-1].llm_message.text == "Not run, then."


def test_a_risk_reason_reaches_our_client_live_and_on_resume_and_no_other(
    served: ServerProcess, llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    """The server's analyzers say why an action is risky: our client hears the reason (on
    the socket, and from the history when it reattaches); a client that did not ask (an
    OpenHands one, whose events forbid unknown fields) gets the events without it."""
    from ohtui.sdk import EnsembleSecurityAnalyzer, LLMSecurityAnalyzer, PatternSecurityAnalyzer

    def reasons(conversation: RemoteConversation) -> list[str | None]:
        pending = conversation.state.get_unmatched_actions(conversation.state.events)
        return [a.security_risk_reason for a in pending]

    first = attach(served, llm_server, tmp_path)
    with first:
        first.set_security_analyzer(
            EnsembleSecurityAnalyzer(analyzers=[LLMSecurityAnalyzer(), PatternSecurityAnalyzer()])
        )
        first.set_confirmation_policy(AlwaysConfirm())
        push = {"command": "git push --force origin main", "security_risk": "LOW"}
        llm_server.reply_tool_call("terminal", push)
        first.send_message("publish")
        first.run()
        assert first.state.execution_status is Status.WAITING_FOR_CONFIRMATION
        live = reasons(first)
        assert len(live) == 1 and live[0] is not None and "(rule force-push)" in live[0]
    with attach(served, llm_server, tmp_path, conversation_id=first.id) as again:
        assert reasons(again) == live
    with served.client() as client:
        items = client.get(f"/api/conversations/{first.id}/events/search").json()["items"]
        actions = [i for i in items if i["kind"] == "ActionEvent"]
        assert actions and all("security_risk_reason" not in a for a in actions)


def test_interrupt_stops_the_step_and_is_shown_as_ours(
    served: ServerProcess, llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    llm_server.reply(Reply(text="slow", delay=5))
    with attach(served, llm_server, tmp_path) as conversation:
        conversation.send_message("take your time")
        conversation.run(blocking=False)
        wait(lambda: conversation.state.execution_status is Status.RUNNING)
        started = time.monotonic()
        conversation.interrupt()
        wait(lambda: conversation.state.execution_status is Status.PAUSED)
        assert time.monotonic() - started < 3
        wait(lambda: any(isinstance(e, InterruptEvent) for e in conversation.state.events))


def test_a_wrong_key_is_a_sentence_naming_the_host(
    served: ServerProcess, llm_server: ScriptedLLMServer
) -> None:
    remote = RemoteWorkspace(host=served.url, api_key="wrong-key", working_dir="/tmp")
    with pytest.raises(RemoteAuthenticationError, match=r"127\.0\.0\.1"):
        Conversation(make_agent(llm_server), workspace=remote, visualizer=None)


def test_attach_by_id_keeps_the_history_and_close_deletes_only_when_asked(
    served: ServerProcess, llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    llm_server.reply_text("First.")
    first = attach(served, llm_server, tmp_path)
    first.send_message("hi")
    first.run()
    first.close()
    first.close()  # idempotent
    again = attach(served, llm_server, tmp_path, conversation_id=first.id)
    assert again.id == first.id
    assert history_ids(again) == server_ids(first)
    assert [e.llm_message.text for e in again.state.events if isinstance(e, MessageEvent)] == [
        "hi",
        "First.",
    ]
    again.close()
    client = first.workspace.client  # type: ignore[attr-defined]
    assert client.get(f"/api/conversations/{first.id}").status_code == 200
    wanted = uuid.uuid4()
    gone = attach(served, llm_server, tmp_path, conversation_id=wanted, delete_on_close=True)
    assert gone.id == wanted
    gone.close()
    assert client.get(f"/api/conversations/{wanted}").status_code == 404


def test_pause_ends_the_run_after_its_step(
    served: ServerProcess, llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    llm_server.reply_tool_call("terminal", {"command": "echo x"}, delay=1)
    with attach(served, llm_server, tmp_path) as conversation:
        conversation.send_message("work")
        conversation.run(blocking=False)
        wait(lambda: conversation.state.execution_status is Status.RUNNING)
        conversation.pause()
        wait(lambda: conversation.state.execution_status is Status.PAUSED)
        wait(lambda: any(isinstance(e, PauseEvent) for e in conversation.state.events))


def test_secrets_ask_agent_and_titles(
    served: ServerProcess, llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    with attach(served, llm_server, tmp_path) as conversation:
        conversation.update_secrets({"TOKEN": "s3cret-value", "LATER": lambda: "from-callable"})
        llm_server.reply_tool_call("terminal", {"command": "echo $TOKEN-$LATER | rev"})
        llm_server.reply_text("Echoed.")
        conversation.send_message("echo the secrets")
        conversation.run()
        result = [e for e in conversation.state.events if isinstance(e, ObservationEvent)][-1]
        assert "elballac-morf-eulav-terc3s" in result.observation.text  # both reached the shell
        llm_server.reply_text("Because s3cret-value.")
        assert conversation.ask_agent("why?") == "Because <secret-hidden>."
        llm_server.reply_text("Login bug fix")
        assert conversation.generate_title() == "Login bug fix"
        assert conversation.state.refresh_from_server()["title"] == "Login bug fix"
        conversation.set_title("Renamed")
        assert conversation.state.title == "Renamed"
        assert conversation.state.refresh_from_server()["title"] == "Renamed"


def test_condense_on_the_server(
    served: ServerProcess, llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    with attach(served, llm_server, tmp_path) as plain:
        with pytest.raises(RemoteServerError) as caught:
            plain.condense()
        assert caught.value.status_code == 409
    with attach(served, llm_server, tmp_path, condense=True) as conversation:
        for n in range(3):
            llm_server.reply_text(f"Answer {n}.")
            conversation.send_message(f"question {n}")
            conversation.run()
        llm_server.reply_text("They asked three questions.")
        conversation.condense()
        wait(lambda: any(isinstance(e, Condensation) for e in conversation.state.events))
        condensation = next(e for e in conversation.state.events if isinstance(e, Condensation))
        assert condensation.summary == "They asked three questions."


def test_a_dropped_socket_is_rejoined_with_no_event_lost_or_repeated(
    served: ServerProcess, llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    seen: list[Event] = []
    with TCPProxy(served.port) as proxy:
        conversation = attach(proxy, llm_server, tmp_path, callbacks=[seen.append])
        statuses: list[SocketStatus] = []
        conversation.add_connection_callback(lambda status, reason: statuses.append(status))
        with conversation:
            llm_server.reply_tool_call("terminal", {"command": "echo a"}, delay=0.5)
            llm_server.reply_tool_call("terminal", {"command": "echo b"})
            llm_server.reply_text("Both done.")
            conversation.send_message("echo a, then b")
            conversation.run(blocking=False)
            wait(lambda: conversation.state.execution_status is Status.RUNNING)
            proxy.drop()  # mid-run: what happens meanwhile reaches us only after rejoining
            wait(lambda: SocketStatus.RECONNECTING in statuses)
            wait(lambda: conversation.state.execution_status is Status.FINISHED)
            wait(lambda: any(isinstance(e, MessageEvent) and e.source == "agent" for e in seen))
            assert history_ids(conversation) == server_ids(conversation)
            delivered = [e.id for e in seen if not isinstance(e, ConversationStateUpdateEvent)]
            assert sorted(delivered) == sorted(set(delivered))  # each event heard once
            assert set(server_ids(conversation)) <= set(delivered)  # and none missed


def test_a_status_changed_while_cut_off_is_heard_after_rejoining(
    served: ServerProcess, llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    """A client that only watches (another runs the conversation) hears the status the
    server moved to while the link was down: its listeners, not only its cache."""
    llm_server.reply(Reply(text="slow", delay=8))
    runner = attach(served, llm_server, tmp_path)
    with TCPProxy(served.port) as proxy, runner:
        runner.send_message("take your time")
        runner.run(blocking=False)
        wait(lambda: runner.state.execution_status is Status.RUNNING)
        heard: list[Event] = []
        statuses: list[SocketStatus] = []
        watcher = attach(
            proxy, llm_server, tmp_path, conversation_id=runner.id, callbacks=[heard.append]
        )
        with watcher:
            watcher.add_connection_callback(lambda status, reason: statuses.append(status))
            assert watcher.state.execution_status is Status.RUNNING
            proxy.cut()
            before = len(heard)
            wait(lambda: SocketStatus.RECONNECTING in statuses)
            runner.interrupt()  # meanwhile: the server pauses it
            wait(lambda: runner.state.execution_status is Status.PAUSED)
            proxy.restore()
            wait(lambda: statuses[-1] is SocketStatus.CONNECTED and len(statuses) > 2)
            wait(lambda: watcher.state.execution_status is Status.PAUSED)
            wait(
                lambda: any(
                    isinstance(e, ConversationStateUpdateEvent)
                    and e.key == "execution_status"
                    and e.value == "paused"
                    for e in heard[before:]
                ),
                timeout=5,
            )


@pytest.mark.slow
def test_a_deleted_conversation_or_a_changed_key_stops_the_retrying(
    llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    first = ServerProcess(tmp_path).start()
    second: ServerProcess | None = None
    try:
        with TCPProxy(first.port) as proxy:
            deleted = attach(proxy, llm_server, tmp_path)
            statuses: list[SocketStatus] = []
            deleted.add_connection_callback(lambda status, reason: statuses.append(status))
            with first.client() as client:
                assert client.delete(f"/api/conversations/{deleted.id}").status_code == 200
            proxy.drop()
            wait(lambda: deleted.connection_status is SocketStatus.FAILED)
            time.sleep(0.3)
            assert statuses.count(SocketStatus.RECONNECTING) <= 1  # no retrying after 4004
            deleted.close()

        rotated = attach(first, llm_server, tmp_path)
        first.stop()
        second = ServerProcess(tmp_path, port=first.port, key="another-key-9876543210").start()
        wait(lambda: rotated.connection_status is SocketStatus.FAILED)  # 4001: no retrying
        rotated.close()
    finally:
        first.kill()
        if second is not None:
            second.stop()


@pytest.mark.slow
def test_a_server_killed_mid_run_and_restarted_is_rejoined_with_its_history(
    llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    first = ServerProcess(tmp_path).start()
    statuses: list[SocketStatus] = []
    conversation = attach(first, llm_server, workspace)
    conversation.add_connection_callback(lambda status, reason: statuses.append(status))
    second: ServerProcess | None = None
    try:
        llm_server.reply_tool_call("terminal", {"command": "sleep 30"})
        conversation.send_message("wait a long time")
        conversation.run(blocking=False)
        wait(lambda: any(isinstance(e, ActionEvent) for e in conversation.state.events))
        first.kill()
        wait(lambda: SocketStatus.RECONNECTING in statuses)
        events_before = [e.id for e in conversation.state.events]

        second = ServerProcess(tmp_path, port=first.port).start()
        wait(lambda: conversation.connection_status is SocketStatus.CONNECTED)
        # The restarted server ends the killed run; the client sees it, with nothing lost.
        wait(lambda: conversation.state.execution_status is not Status.RUNNING)
        ids = [e.id for e in conversation.state.events]
        assert ids[: len(events_before)] == events_before  # nothing moved or lost
        assert history_ids(conversation) == server_ids(conversation)
        assert len(ids) == len(set(ids))

        llm_server.reply_text("Back again.")
        conversation.send_message("are you there?")
        conversation.run()
        assert conversation.state.execution_status is Status.FINISHED
        last = [e for e in conversation.state.events if isinstance(e, MessageEvent)][-1]
        assert last.llm_message.text == "Back again."
        results = [e for e in conversation.state.events if isinstance(e, ObservationEvent)]
        assert all("sleep" not in r.observation.text for r in results)
    finally:
        conversation.close()
        first.kill()
        if second is not None:
            second.stop()
    assert uuid.UUID(str(conversation.id))
