"""Checkpoints of the workspace through `ohtui serve`: our RemoteConversation lists them
from the server's events, shows and restores them over the routes (files back on the
server's disk), and every other subscriber that reads ohtui's kinds hears the restore."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from llm_server import Reply, ScriptedLLMServer
from pydantic import SecretStr
from serve_helpers import Frames
from server_process import TEST_KEY, ServerProcess

from ohtui.sdk import (
    LLM,
    Agent,
    CheckpointError,
    Conversation,
    ConversationExecutionStatus,
    RemoteConversation,
    RemoteWorkspace,
    Tool,
)
from ohtui.sdk.event import CheckpointRestoreEvent, Event

Status = ConversationExecutionStatus


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = ServerProcess(tmp_path_factory.mktemp("serve")).start()
    try:
        yield process
    finally:
        process.stop()


def attach(served: ServerProcess, llm: ScriptedLLMServer, workspace: Path, **kwargs: Any) -> Any:
    model = LLM(
        model="openai/test-model",
        base_url=llm.base_url,
        api_key=SecretStr("sk-test"),
        usage_id="agent",
        num_retries=0,
    )
    remote = RemoteWorkspace(host=served.url, api_key=TEST_KEY, working_dir=str(workspace))
    conversation = Conversation(
        Agent(llm=model, tools=[Tool(name="terminal")]),
        workspace=remote,
        autotitle=False,
        visualizer=None,
        **kwargs,
    )
    assert isinstance(conversation, RemoteConversation)
    return conversation


def write_a_file(conversation: RemoteConversation, llm: ScriptedLLMServer) -> None:
    llm.reply_tool_call("terminal", {"command": "echo x > a.txt", "security_risk": "LOW"})
    llm.reply_text("Wrote a.txt.")
    conversation.send_message("write a.txt")
    conversation.run()
    assert conversation.state.execution_status is Status.FINISHED


def test_list_show_and_restore_over_the_wire(
    served: ServerProcess, llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    (tmp_path / "keep.txt").write_text("kept\n", encoding="utf-8")
    seen: list[Event] = []
    with attach(served, llm_server, tmp_path, callbacks=[seen.append]) as conversation:
        write_a_file(conversation, llm_server)
        assert (tmp_path / "a.txt").read_text() == "x\n"
        [checkpoint] = conversation.list_checkpoints()
        assert checkpoint.label == "echo x > a.txt" and checkpoint.files == 1
        assert conversation.undo_checkpoint() == checkpoint
        short = (checkpoint.checkpoint_id or "")[:8]
        assert [(c.path, c.status) for c in conversation.checkpoint_changes(short)] == [
            ("a.txt", "deleted")
        ]
        assert "a.txt" in conversation.checkpoint_diff(short)

        url = f"{served.ws_url}/sockets/events/{conversation.id.hex}"
        ours = Frames(url + "?ohtui_fields=true", TEST_KEY)
        theirs = Frames(url, TEST_KEY)  # an OpenHands client: it knows no checkpoint kinds
        try:
            restored = conversation.restore_checkpoint()
            assert [(c.path, c.status) for c in restored.changes] == [("a.txt", "deleted")]
            assert not (tmp_path / "a.txt").exists()
            assert (tmp_path / "keep.txt").read_text() == "kept\n"
            heard = ours.wait_for(lambda f: f.get("kind") == "CheckpointRestoreEvent")
            assert heard["id"] == restored.id and heard["undo_checkpoint_id"]
            conversation.set_title("after the restore")  # a frame both sockets get, after it
            theirs.wait_for(lambda f: f.get("key") == "title")
            assert not [k for k in theirs.kinds() if "Checkpoint" in k]
        finally:
            ours._socket.close()
            theirs._socket.close()
        assert [e.id for e in seen if isinstance(e, CheckpointRestoreEvent)] == [restored.id]
        with pytest.raises(CheckpointError, match="nothing to undo"):
            conversation.restore_checkpoint()
        # The restore itself is undone by restoring the checkpoint taken right before it.
        conversation.restore_checkpoint(restored.undo_checkpoint_id)
        assert (tmp_path / "a.txt").read_text() == "x\n"

    with attach(served, llm_server, tmp_path, conversation_id=conversation.id) as again:
        assert [c.checkpoint_id for c in again.list_checkpoints()][-1] == checkpoint.checkpoint_id


def test_no_restore_while_the_agent_runs(
    served: ServerProcess, llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    with attach(served, llm_server, tmp_path) as conversation:
        write_a_file(conversation, llm_server)
        release = threading.Event()
        llm_server.reply(Reply(text="Slow.", delay=1.5))
        conversation.send_message("think a while")
        conversation.run(blocking=False)
        try:
            deadline = 50
            while conversation.state.execution_status is not Status.RUNNING and deadline:
                release.wait(0.1)
                deadline -= 1
            with pytest.raises(CheckpointError, match="The agent is running: pause it"):
                conversation.restore_checkpoint()
            assert (tmp_path / "a.txt").exists()
        finally:
            conversation.run()  # waits for the slow run's end


def test_route_errors_are_sentences(
    served: ServerProcess, llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    with attach(served, llm_server, tmp_path) as conversation:
        write_a_file(conversation, llm_server)
        base = f"{served.url}/api/conversations/{conversation.id.hex}/checkpoints"
        with httpx.Client(headers=served.headers, timeout=10) as client:
            listing = client.get(base).json()
            [item] = listing["items"]
            assert item["kind"] == "CheckpointEvent"
            assert listing["undo_checkpoint_id"] == item["checkpoint_id"]
            changes = client.get(f"{base}/{item['checkpoint_id'][:6]}/changes").json()
            assert changes["checkpoint_id"] == item["checkpoint_id"]
            assert changes["changes"] == [{"path": "a.txt", "status": "deleted"}]

            missing = client.get(f"{base}/deadbeef/changes")
            assert missing.status_code == 404
            assert "has no checkpoint 'deadbeef'" in missing.json()["detail"]
            unknown = client.post(f"{base}/restore", json={"checkpoint_id": "deadbeef"})
            assert unknown.status_code == 404
            bad = client.post(f"{base}/restore", json={"checkpoint_id": 7})
            assert bad.status_code == 422 and "'checkpoint_id' must be" in bad.json()["detail"]
            other = str(conversation.id).replace(conversation.id.hex[:4], "0000", 1)
            gone = client.get(f"{served.url}/api/conversations/{other}/checkpoints")
            assert gone.status_code == 404
            refused = httpx.get(base, timeout=10)  # no key
            assert refused.status_code == 401
            assert (tmp_path / "a.txt").exists()  # nothing restored by any of them

        with pytest.raises(CheckpointError, match="no checkpoint 'feedface'"):
            conversation.checkpoint_changes("feedface")
