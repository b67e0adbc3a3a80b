"""Interop with the real OpenHands 1.58 SDK against `ohtui serve` (notes statements 24, 26).

Opt-in: runs only when OHTUI_PEER_PYTHON points at a Python 3.12 venv with
openhands-agent-server 1.58.0 (scripts/peer-agent-server.sh builds one). The peer's scripts
(peer_client.py, peer_validate.py) run under that Python; this side scripts the LLM.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from llm_server import ScriptedLLMServer
from serve_helpers import Frames, create_payload, is_full_state, user_message
from server_process import TEST_KEY, ServerProcess

PEER = os.environ.get("OHTUI_PEER_PYTHON")
HERE = Path(__file__).parent
pytestmark = [
    pytest.mark.peer,
    pytest.mark.skipif(not PEER, reason="OHTUI_PEER_PYTHON is not set (opt-in interop)"),
]


def run_peer(script: str, *args: str, timeout: float = 600) -> dict[str, Any]:
    assert PEER is not None
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "OPENHANDS_SUPPRESS_BANNER": "1"}
    result = subprocess.run(
        [PEER, str(HERE / script), *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )
    lines = [line for line in result.stdout.splitlines() if line.startswith("RESULT ")]
    assert lines, f"{script} printed no result:\n{result.stdout[-3000:]}\n{result.stderr[-5000:]}"
    return dict(json.loads(lines[-1][len("RESULT ") :]))


def test_openhands_remote_conversation_drives_ohtui_serve(
    server: ServerProcess, llm_script: ScriptedLLMServer, tmp_path: Path
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    llm_script.reply_text("Greeting title")  # the server's autotitle (OpenHands' default)
    llm_script.reply_text("hello back")
    llm_script.reply_tool_call("terminal", {"command": "echo a", "security_risk": "LOW"})
    llm_script.reply_text("ok, not run")
    llm_script.reply_tool_call("terminal", {"command": "echo b", "security_risk": "LOW"})
    llm_script.reply_text("ran it")
    llm_script.reply_text("I echoed b")  # ask_agent
    llm_script.reply_text("Echo test")  # generate_title (client-side)
    result = run_peer("peer_client.py", server.url, TEST_KEY, llm_script.base_url, str(workspace))
    assert "error" not in result, result.get("error")
    assert result["status_after_run"] == "finished"
    assert result["last_agent_text"] == "hello back"
    assert result["status_waiting"] == "waiting_for_confirmation"
    assert result["rejected"] == ["not that"]
    assert result["status_after_reject_run"] == "finished"
    assert result["status_waiting_2"] == "waiting_for_confirmation"
    assert result["status_after_accept"] == "finished"
    assert result["observations"] == ["ObservationEvent"]
    assert result["status_after_pause"] == "paused"
    assert result["ask_agent"] == "I echoed b"
    assert result["title"] == "Echo test"
    assert result["stats_usages"] == ["agent"]
    assert result["errors_logged"] == []  # no ws_event_processing_error


def test_every_frame_validates_as_an_openhands_event(
    server: ServerProcess, llm_script: ScriptedLLMServer, tmp_path: Path
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    payload = create_payload(llm_script, workspace)
    payload["agent"]["tools"] = [{"name": n} for n in ("terminal", "file_editor", "task_tracker")]
    payload["agent"]["llm"]["stream"] = True
    payload["agent"]["condenser"] = {
        "kind": "LLMSummarizingCondenser",
        "llm": {**payload["agent"]["llm"], "usage_id": "condenser", "stream": False},
        "max_size": 80,
        "keep_first": 1,
    }
    infos = []
    with server.client() as client:
        cid = client.post("/api/conversations", json=payload).json()["id"]
        frames = Frames(f"{server.ws_url}/sockets/events/{cid}", TEST_KEY)
        try:
            frames.wait_for(is_full_state("idle"))
            path = str(workspace / "a.txt")
            llm_script.reply_tool_call("terminal", {"command": "echo hi", "security_risk": "LOW"})
            llm_script.reply_tool_call(
                "file_editor",
                {"command": "create", "path": path, "file_text": "x\n", "security_risk": "LOW"},
            )
            llm_script.reply_tool_call(
                "task_tracker", {"command": "plan", "task_list": [{"title": "t", "status": "todo"}]}
            )
            llm_script.reply_tool_call("think", {"thought": "hmm"})
            llm_script.reply_tool_call("nope", {"x": 1})
            llm_script.reply_text("all done, streamed in words")
            client.post(f"/api/conversations/{cid}/events", json=user_message("go", run=True))
            frames.wait_for(is_full_state("finished"), timeout=180)
            client.post(
                f"/api/conversations/{cid}/confirmation_policy",
                json={"policy": {"kind": "AlwaysConfirm"}},
            )
            llm_script.reply_tool_call("terminal", {"command": "echo no", "security_risk": "LOW"})
            client.post(f"/api/conversations/{cid}/events", json=user_message("more", run=True))
            frames.wait_for(is_full_state("waiting_for_confirmation"), timeout=180)
            client.post(
                f"/api/conversations/{cid}/events/respond_to_confirmation",
                json={"accept": False, "reason": "no"},
            )
            client.post(f"/api/conversations/{cid}/interrupt")
            llm_script.reply_text("A summary.")
            client.post(f"/api/conversations/{cid}/condense")
            client.post(f"/api/conversations/{cid}/secrets", json={"secrets": {"TOKEN": "t-1"}})
            time.sleep(1)
            infos.append(client.get(f"/api/conversations/{cid}").json())
            stored = client.get(f"/api/conversations/{cid}/events/search").json()["items"]
        finally:
            frames.close()
    sent = list(frames.frames)
    kinds = {f["kind"] for f in sent}
    assert {
        "StreamingDeltaEvent",
        "ObservationEvent",
        "UserRejectObservation",
        "InterruptEvent",
        "AgentErrorEvent",
        "Condensation",
    } <= kinds | {f["kind"] for f in stored}
    out = tmp_path / "frames.json"
    out.write_text(json.dumps({"frames": sent + stored, "infos": infos}))
    result = run_peer("peer_validate.py", str(out))
    assert result["checked"] == len(sent) + len(stored) + len(infos)
    assert result["failures"] == []


def test_openhands_remote_conversation_forks_and_navigates_on_ohtui_serve(
    server: ServerProcess, llm_script: ScriptedLLMServer, tmp_path: Path
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    llm_script.reply_text("Counting")  # the server's autotitle (OpenHands' default)
    llm_script.reply_text("Answer one.")
    llm_script.reply_text("Answer two, in the fork.")
    llm_script.reply_text("Answer two, again.")
    result = run_peer(
        "peer_tree_client.py", server.url, TEST_KEY, llm_script.base_url, str(workspace)
    )
    assert "error" not in result, result.get("error")
    assert result["whole"] == {
        "title": "Copy",
        "tags": {"topic": "copy"},
        "forked_from_conversation_id": result["id"],
        "forked_from_event_id": None,
    }
    assert result["whole_same_events"] is True
    assert result["branch_leaf"] is True
    assert result["branch_texts"] == ["one"]
    assert result["branch_status"] == "finished"
    assert result["branch_texts_after"] == ["one", "two, in the fork", "Answer two, in the fork."]
    assert result["leaf_after_navigate"] is True
    assert result["sibling_parent"] is True
    assert result["fork {'from_event_id': 'no-such-event'}"] == 400
    assert result[f"fork {{'id': '{result['id']}'}}"] == 409
    assert result["navigate {'event_id': 'no-such-event'}"] == 404
    assert result["errors_logged"] == []
