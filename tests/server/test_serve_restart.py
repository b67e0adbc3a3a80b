"""`ohtui serve` durability and scale: SIGKILL mid-run + restart, 100 idle + 10 running."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from llm_server import Reply, ScriptedLLMServer, ToolCall
from serve_helpers import Frames, create_payload, is_full_state, user_message
from server_process import TEST_KEY, ServerProcess

pytestmark = pytest.mark.slow


def wait_for(client: httpx.Client, cid: str, predicate: Any, timeout: float = 180) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        info = client.get(f"/api/conversations/{cid}").json()
        events = client.get(f"/api/conversations/{cid}/events/search").json()["items"]
        if predicate(info, events):
            return info, events
        time.sleep(0.1)
    raise AssertionError(f"not reached: {info['execution_status']} {[e['kind'] for e in events]}")


def test_sigkill_mid_run_then_restart_resumes_from_the_store(
    llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    first = ServerProcess(tmp_path).start()
    try:
        with first.client() as client:
            cid = client.post(
                "/api/conversations", json=create_payload(llm_server, workspace)
            ).json()["id"]
            llm_server.reply_tool_call("terminal", {"command": "sleep 20", "security_risk": "LOW"})
            client.post(
                f"/api/conversations/{cid}/events", json=user_message("wait a bit", run=True)
            )
            wait_for(
                client,
                cid,
                lambda info, events: (
                    info["execution_status"] == "running"
                    and any(e["kind"] == "ActionEvent" for e in events)
                ),
            )
            time.sleep(0.5)  # the command is running
    finally:
        first.kill()

    second = ServerProcess(tmp_path).start()
    try:
        with second.client() as client:
            info = client.get(f"/api/conversations/{cid}")
            assert info.status_code == 200
            # The run in flight ends PAUSED: the engine cannot know what the command did, so
            # it answers it with an error and waits for the user rather than going on alone.
            assert info.json()["execution_status"] == "paused"
            events = client.get(f"/api/conversations/{cid}/events/search").json()["items"]
            assert [e["kind"] for e in events] == [
                "SystemPromptEvent",
                "MessageEvent",
                "ActionEvent",
                "AgentErrorEvent",
            ]
            assert "interrupted before it finished" in events[-1]["error"]
            # It goes on with the agent its client described, API key included.
            llm_server.reply_text("carrying on")
            assert client.post(f"/api/conversations/{cid}/run").status_code == 200
            info, events = wait_for(
                client, cid, lambda info, events: info["execution_status"] == "finished"
            )
            assert events[-1]["kind"] == "MessageEvent"
            assert (
                llm_server.request_headers[-1]["authorization"] == "Bearer sk-test-0123456789abcdef"
            )
        frames = Frames(f"{second.ws_url}/sockets/events/{cid}", TEST_KEY)
        try:
            assert frames.wait_for(is_full_state())["value"]["execution_status"] == "finished"
        finally:
            frames.close()
    finally:
        second.stop()


def _echo_then_done(body: dict[str, Any]) -> Reply:
    """A tool call first, then a text reply once the command's result is in."""
    if body["messages"][-1]["role"] == "tool":
        return Reply(text="done")
    return Reply(
        tool_calls=(
            ToolCall("terminal", json.dumps({"command": "echo hi", "security_risk": "LOW"})),
        )
    )


def test_100_idle_and_10_running_lose_no_event(
    llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    llm_server.set_default(_echo_then_done)
    server = ServerProcess(tmp_path).start()
    try:
        with server.client() as client:
            ids = [
                client.post(
                    "/api/conversations", json=create_payload(llm_server, workspace)
                ).json()["id"]
                for _ in range(110)
            ]
            running = ids[:10]
            sockets = {
                cid: Frames(f"{server.ws_url}/sockets/events/{cid}", TEST_KEY) for cid in running
            }
            try:
                for frames in sockets.values():
                    frames.wait_for(is_full_state("idle"))
                for cid in running:
                    client.post(
                        f"/api/conversations/{cid}/events", json=user_message("go", run=True)
                    )
                lost = duplicated = 0
                for cid, frames in sockets.items():
                    frames.wait_for(is_full_state("finished"), timeout=180)
                    stored = [
                        e["id"]
                        for e in client.get(f"/api/conversations/{cid}/events/search").json()[
                            "items"
                        ]
                    ]
                    seen = [
                        f["id"]
                        for f in frames.frames
                        if f["kind"] not in ("ConversationStateUpdateEvent", "StreamingDeltaEvent")
                    ]
                    lost += len(set(stored) - set(seen))
                    duplicated += len(seen) - len(set(seen))
                    assert len(stored) == 5  # system, user, action, observation, agent message
                assert (lost, duplicated) == (0, 0)
            finally:
                for frames in sockets.values():
                    frames.close()
            statuses = [
                client.get(f"/api/conversations/{cid}").json()["execution_status"]
                for cid in ids[10:]
            ]
            assert set(statuses) == {"idle"}
            assert client.get("/api/conversations/count").json() == 110
    finally:
        server.stop()


def test_switch_llm_waits_for_the_run_and_outlives_a_restart(tmp_path: Path) -> None:
    """OpenHands' `switch_llm`: refused (409, a sentence) while the conversation runs; once
    it stops, the next call goes to the new LLM, and so after a restart, with no client
    switching again (the saved agent has it, key and all; what is reported has no key)."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    with ScriptedLLMServer() as old, ScriptedLLMServer() as new:
        payload = create_payload(old, workspace)
        payload["agent"]["condenser"] = {
            "kind": "LLMSummarizingCondenser",
            "llm": {**payload["agent"]["llm"], "usage_id": "condenser", "stream": False},
            "max_size": 80,
        }
        moved = {**payload["agent"]["llm"], "model": "openai/moved", "base_url": new.base_url}
        moved["api_key"] = "sk-moved-0123456789"
        first = ServerProcess(tmp_path).start()
        try:
            with first.client() as client:
                cid = client.post("/api/conversations", json=payload).json()["id"]
                old.reply(Reply(text="slow", delay=3))
                client.post(f"/api/conversations/{cid}/events", json=user_message("hi", run=True))
                wait_for(client, cid, lambda info, events: info["execution_status"] == "running")
                busy = client.post(f"/api/conversations/{cid}/switch_llm", json={"llm": moved})
                assert busy.status_code == 409
                assert "pause it, or wait for it to finish" in busy.json()["detail"]
                wait_for(client, cid, lambda info, events: info["execution_status"] == "finished")
                done = client.post(f"/api/conversations/{cid}/switch_llm", json={"llm": moved})
                assert done.status_code == 200, done.text
                agent = client.get(f"/api/conversations/{cid}").json()["agent"]
                assert (agent["llm"]["model"], agent["llm"]["base_url"]) == (
                    "openai/moved",
                    new.base_url,
                )
                assert agent["condenser"]["llm"]["base_url"] == new.base_url  # it copied it
                assert "sk-moved" not in json.dumps(agent)
        finally:
            first.stop()
        old.close()  # the old address is gone
        second = ServerProcess(tmp_path, port=first.port).start()
        try:
            with second.client() as client:
                new.reply_text("From the new place.")
                client.post(f"/api/conversations/{cid}/events", json=user_message("on", run=True))
                wait_for(client, cid, lambda info, events: info["execution_status"] == "finished")
                assert new.requests[-1]["model"] == "moved"
                assert new.request_headers[-1]["authorization"] == "Bearer sk-moved-0123456789"
        finally:
            second.stop()
