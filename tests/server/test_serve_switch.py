"""`switch_llm` on `ohtui serve`: what follows the switch (open sockets, the API key)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
from llm_server import ScriptedLLMServer
from serve_helpers import Frames, create_payload, is_full_state, user_message
from server_process import TEST_KEY, ServerProcess

from ohtui.sdk.wire.agent_in import REDACTED


def created(client: httpx.Client, llm: ScriptedLLMServer, tmp_path: Path) -> tuple[str, Any]:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    payload = create_payload(llm, workspace)
    response = client.post("/api/conversations", json=payload)
    assert response.status_code == 201, response.text
    return str(response.json()["id"]), payload["agent"]["llm"]


def test_an_open_socket_follows_the_switched_conversation(
    server: ServerProcess, llm_script: ScriptedLLMServer, tmp_path: Path
) -> None:
    """A client opening with other settings switches the LLM; a socket opened before it
    keeps working: its next message runs, with the new model."""
    with server.client() as client:
        cid, llm = created(client, llm_script, tmp_path)
        frames = Frames(f"{server.ws_url}/sockets/events/{cid}", TEST_KEY)
        try:
            frames.wait_for(is_full_state("idle"))
            moved = {**llm, "model": "openai/moved"}
            switched = client.post(f"/api/conversations/{cid}/switch_llm", json={"llm": moved})
            assert switched.status_code == 200, switched.text
            llm_script.reply_text("from the new model")
            frames.send(user_message("hi"))
            frames.wait_for(is_full_state("finished"), timeout=30)
            assert llm_script.requests[-1]["model"] == "moved"
            assert not [f for f in frames.frames if f.get("kind") == "ServerErrorEvent"]
        finally:
            frames.close()


def test_a_redacted_key_is_kept_at_the_same_address_only(
    server: ServerProcess, llm_script: ScriptedLLMServer, tmp_path: Path
) -> None:
    """The LLM sent back as shown (key redacted), only the model changed, keeps its key; sent
    to another address, the old key is never sent there."""
    with server.client() as client, ScriptedLLMServer() as elsewhere:
        cid, llm = created(client, llm_script, tmp_path)
        shown = client.get(f"/api/conversations/{cid}").json()["agent"]["llm"]
        assert shown["api_key"] == REDACTED
        moved = {**shown, "model": "openai/moved"}
        assert client.post(f"/api/conversations/{cid}/switch_llm", json={"llm": moved}).is_success
        assert client.get(f"/api/conversations/{cid}").json()["agent"]["llm"]["api_key"] == REDACTED
        llm_script.reply_text("kept")
        client.post(f"/api/conversations/{cid}/events", json=user_message("one", run=True))
        _wait_finished(client, cid)
        assert llm_script.request_headers[-1]["authorization"] == f"Bearer {llm['api_key']}"

        away = {**moved, "base_url": elsewhere.base_url}
        assert client.post(f"/api/conversations/{cid}/switch_llm", json={"llm": away}).is_success
        elsewhere.reply_text("no key here")
        client.post(f"/api/conversations/{cid}/events", json=user_message("two", run=True))
        _wait_finished(client, cid)
        assert elsewhere.request_headers, "the new address was not asked"
        assert llm["api_key"] not in str(elsewhere.request_headers)


def _wait_finished(client: httpx.Client, cid: str, timeout: float = 60) -> None:
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        info = client.get(f"/api/conversations/{cid}").json()
        if info["execution_status"] in ("finished", "error"):
            return
        time.sleep(0.1)
    raise AssertionError(f"still {info['execution_status']}")
