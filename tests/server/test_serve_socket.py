"""`ohtui serve` event socket (notes §1.4, statement 23): auth, close codes, frame order."""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path

import httpx
import pytest
from llm_server import ScriptedLLMServer
from serve_helpers import Frames, create_payload, is_full_state, user_message
from server_process import TEST_KEY, ServerProcess
from test_wire import check_frame


@pytest.fixture
def conversation(server: ServerProcess, llm_script: ScriptedLLMServer, tmp_path: Path) -> str:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    with server.client() as client:
        response = client.post("/api/conversations", json=create_payload(llm_script, workspace))
    return str(response.json()["id"])


def socket_url(server: ServerProcess, cid: str) -> str:
    return f"{server.ws_url}/sockets/events/{cid}"


def test_bad_key_closes_4001(server: ServerProcess, conversation: str) -> None:
    frames = Frames(socket_url(server, conversation), "wrong-key")
    assert frames.wait_closed() == 4001
    assert frames.close_reason == "Authentication failed"
    assert frames.frames == []


def test_non_auth_first_frame_closes_4001(server: ServerProcess, conversation: str) -> None:
    frames = Frames(socket_url(server, conversation), None)
    frames.send(user_message("hi"))
    assert frames.wait_closed() == 4001


def test_unknown_conversation_closes_4004(server: ServerProcess) -> None:
    frames = Frames(socket_url(server, str(uuid.uuid4())), TEST_KEY)
    assert frames.wait_closed() == 4004
    assert frames.close_reason == "Conversation not found"
    assert Frames(socket_url(server, "not-a-uuid"), TEST_KEY).wait_closed() == 4004


def test_header_auth_on_the_upgrade_works(server: ServerProcess, conversation: str) -> None:
    frames = Frames(socket_url(server, conversation), None, headers=server.headers)
    try:
        first = frames.wait_for(lambda f: True)
        assert is_full_state("idle")(first)
    finally:
        frames.close()


def test_a_turn_streams_in_openhands_order(
    server: ServerProcess, conversation: str, llm_script: ScriptedLLMServer
) -> None:
    frames = Frames(socket_url(server, conversation), TEST_KEY)
    try:
        first = frames.wait_for(lambda f: True)
        assert is_full_state("idle")(first)
        assert first["value"]["id"] == conversation
        llm_script.reply_text("hello back")
        with server.client() as client:
            client.post(f"/api/conversations/{conversation}/events", json=user_message("hi"))
            client.post(f"/api/conversations/{conversation}/run")
        frames.wait_for(is_full_state("finished"), timeout=180)
        assert frames.kinds() == [
            "full_state=idle",
            "SystemPromptEvent",
            "MessageEvent",
            f"last_user_message_id={frames.frames[2]['id']}",
            "execution_status=running",
            "stats=…",
            "MessageEvent",
            "execution_status=finished",
            "full_state=finished",
        ]
        stats = frames.frames[5]["value"]
        assert stats["usage_to_metrics"]["agent"]["model_name"] == "openai/test-model"
        for frame in frames.frames:
            check_frame(frame)
        assert "sk-test" not in json.dumps(frames.frames)
    finally:
        frames.close()


def test_streaming_deltas_are_sent_not_stored(
    server: ServerProcess, llm_script: ScriptedLLMServer, tmp_path: Path
) -> None:
    payload = create_payload(llm_script, tmp_path)
    payload["agent"]["llm"]["stream"] = True
    with server.client() as client:
        cid = client.post("/api/conversations", json=payload).json()["id"]
        frames = Frames(socket_url(server, cid), TEST_KEY)
        try:
            frames.wait_for(is_full_state("idle"))
            llm_script.reply_text("one two three four", chunks=["one ", "two ", "three ", "four"])
            client.post(f"/api/conversations/{cid}/events", json=user_message("count", run=True))
            frames.wait_for(is_full_state("finished"), timeout=180)
            deltas = [f for f in frames.frames if f["kind"] == "StreamingDeltaEvent"]
            assert "".join(d.get("content", "") for d in deltas) == "one two three four"
            assert len(deltas) >= 2
            for delta in deltas:
                check_frame(delta)
            kinds = [
                e["kind"]
                for e in client.get(f"/api/conversations/{cid}/events/search").json()["items"]
            ]
            assert "StreamingDeltaEvent" not in kinds
        finally:
            frames.close()


def test_message_frame_sends_and_runs(
    server: ServerProcess, conversation: str, llm_script: ScriptedLLMServer
) -> None:
    frames = Frames(socket_url(server, conversation), TEST_KEY)
    try:
        frames.wait_for(is_full_state("idle"))
        frames.send({"type": "auth", "session_api_key": TEST_KEY})  # a second one is harmless
        llm_script.reply_text("from the socket")
        frames.send({"role": "user", "content": [{"type": "text", "text": "hi"}]})
        frames.wait_for(is_full_state("finished"), timeout=180)
        frames.send({"role": "system", "content": "nope"})
        error = frames.wait_for(lambda f: f.get("kind") == "ServerErrorEvent")
        assert "only user messages" in error["detail"]
    finally:
        frames.close()


def test_resend_all_replays_history(
    server: ServerProcess, conversation: str, llm_script: ScriptedLLMServer
) -> None:
    llm_script.reply_text("done")
    with server.client() as client:
        client.post(f"/api/conversations/{conversation}/events", json=user_message("x", run=True))
        deadline = time.monotonic() + 180
        while (
            client.get(f"/api/conversations/{conversation}").json()["execution_status"]
            != "finished"
        ):
            assert time.monotonic() < deadline
            time.sleep(0.05)
        stored = client.get(f"/api/conversations/{conversation}/events/search").json()["items"]
    frames = Frames(socket_url(server, conversation) + "?resend_mode=all", TEST_KEY)
    try:
        frames.wait_for(lambda f: f.get("id") == stored[-1]["id"])
        assert [f["id"] for f in frames.frames[1:]] == [e["id"] for e in stored]
    finally:
        frames.close()


def test_every_subscriber_gets_every_frame(
    server: ServerProcess, conversation: str, llm_script: ScriptedLLMServer
) -> None:
    a = Frames(socket_url(server, conversation), TEST_KEY)
    b = Frames(socket_url(server, conversation), TEST_KEY)
    try:
        a.wait_for(is_full_state())
        b.wait_for(is_full_state())
        llm_script.reply_text("to both")
        with server.client() as client:
            client.post(
                f"/api/conversations/{conversation}/events", json=user_message("x", run=True)
            )
        a.wait_for(is_full_state("finished"), timeout=180)
        b.wait_for(is_full_state("finished"), timeout=180)
        ids = lambda frames: [f["id"] for f in frames.frames[1:]]  # noqa: E731
        assert ids(a) == ids(b)
    finally:
        a.close()
        b.close()


def test_the_key_is_never_logged(
    server: ServerProcess, conversation: str, llm_script: ScriptedLLMServer
) -> None:
    """Every path a key travels (header, auth frame, a URL query, the agent's LLM key)."""
    Frames(socket_url(server, conversation) + f"?session_api_key={TEST_KEY}", "bad").wait_closed()
    httpx.get(
        server.url + "/api/conversations/search",
        headers={"X-Session-API-Key": TEST_KEY},
        timeout=120,
    )
    httpx.get(server.url + f"/api/conversations/search?session_api_key={TEST_KEY}")
    time.sleep(0.3)
    log = server.log()
    assert "/sockets/events/" in log and "/api/conversations/search" in log  # it did log them
    assert TEST_KEY not in log
    assert "sk-test-0123456789abcdef" not in log


def test_a_message_sent_as_a_run_ends_is_run(
    server: ServerProcess, conversation: str, llm_script: ScriptedLLMServer
) -> None:
    """The next message goes out the moment the closing full_state arrives, as a client's
    loop does: the run ending then must still pick it up."""
    frames = Frames(socket_url(server, conversation), TEST_KEY)
    try:
        frames.wait_for(is_full_state("idle"))
        with server.client() as client:
            for turn in range(5):
                llm_script.reply_text(f"reply {turn}")
                client.post(
                    f"/api/conversations/{conversation}/events",
                    json=user_message(f"turn {turn}", run=True),
                )
                deadline = time.monotonic() + 180
                while sum(is_full_state("finished")(f) for f in list(frames.frames)) <= turn:
                    assert time.monotonic() < deadline, frames.kinds()
                    time.sleep(0.005)
            texts = [
                e["llm_message"]["content"][0]["text"]
                for e in client.get(
                    f"/api/conversations/{conversation}/events/search",
                    params={"kind": "MessageEvent", "source": "agent"},
                ).json()["items"]
            ]
        assert texts == [f"reply {n}" for n in range(5)]
    finally:
        frames.close()


def test_an_auth_frame_that_cannot_be_a_key_closes_4001(
    server: ServerProcess, conversation: str
) -> None:
    """A key no UTF-8 can hold (a lone surrogate), or an auth frame far larger than a key,
    is refused like a wrong key: 4001, no traceback in the log."""
    frames = Frames(socket_url(server, conversation), "\ud800")
    assert frames.wait_closed() == 4001
    padded = Frames(socket_url(server, conversation), None)
    padded.send({"type": "auth", "session_api_key": TEST_KEY, "padding": "x" * 8192})
    assert padded.wait_closed() == 4001
    assert "Traceback" not in server.log()
