"""Record protocol data from the real openhands-agent-server into tests/fixtures/agent_server/.

    OHTUI_PEER_PYTHON=/path/to/v312/bin/python .venv/bin/python scripts/record-agent-server.py

Starts the peer server (built by scripts/peer-agent-server.sh) and the scripted LLM, plays a
few scenarios over REST and the event socket, and writes, per scenario, the ConversationInfo,
every socket frame in arrival order, the `events/search` pages and the REST error bodies.
The in-repo fake server replays these recordings in the default (peer-free) tests.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import websockets

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from llm_server import Reply, ScriptedLLMServer  # noqa: E402
from peer_agent_server import PEER_ENV, peer_agent_server  # noqa: E402

OUT = ROOT / "tests" / "fixtures" / "agent_server"


class Recorder:
    """Drives one conversation on the peer and records what it says."""

    def __init__(self, url: str, key: str, llm: ScriptedLLMServer, *, stream: bool = False):
        self.url, self.key = url, key
        self.http = httpx.Client(base_url=url, headers={"X-Session-API-Key": key}, timeout=60)
        self.frames: list[dict[str, Any]] = []
        self.rest: dict[str, Any] = {}
        agent = {
            "kind": "Agent",
            "llm": {
                "model": "openai/test-model",
                "base_url": llm.base_url,
                "api_key": "sk-test",
                "usage_id": "agent",
                "num_retries": 0,
                "stream": stream,
            },
            "tools": [{"name": "terminal", "params": {}}],
        }
        response = self.http.post(
            "/api/conversations",
            json={"agent": agent, "workspace": {"working_dir": "/tmp"}, "autotitle": False},
        )
        response.raise_for_status()
        self.info = response.json()
        self.id = self.info["id"]
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=lambda: asyncio.run(self._listen()), daemon=True)
        self._thread.start()
        if not self._ready.wait(20):
            raise RuntimeError("no first frame")

    async def _listen(self) -> None:
        ws_url = self.url.replace("http", "ws", 1) + f"/sockets/events/{self.id}"
        async with websockets.connect(ws_url) as socket:
            await socket.send(json.dumps({"type": "auth", "session_api_key": self.key}))
            while not self._stop.is_set():
                try:
                    raw = await asyncio.wait_for(socket.recv(), 0.2)
                except TimeoutError:
                    continue
                self.frames.append(json.loads(raw))
                self._ready.set()

    def wait_for(self, predicate: Any, timeout: float = 30) -> None:
        """Wait until a frame satisfies `predicate`."""
        deadline = time.monotonic() + timeout
        seen = 0
        while time.monotonic() < deadline:
            for frame in self.frames[seen:]:
                if predicate(frame):
                    return
            seen = len(self.frames)
            time.sleep(0.05)
        raise RuntimeError("timed out waiting for a frame")

    def full_states(self) -> int:
        return sum(1 for f in self.frames if f.get("key") == "full_state")

    def wait_run_end(self, before: int) -> None:
        self.wait_for(lambda f: self.full_states() > before)
        time.sleep(0.3)

    def send(self, text: str) -> None:
        body = {"role": "user", "content": [{"type": "text", "text": text}], "run": False}
        self.http.post(f"/api/conversations/{self.id}/events", json=body).raise_for_status()

    def run(self) -> None:
        before = self.full_states()
        self.http.post(f"/api/conversations/{self.id}/run").raise_for_status()
        self.wait_run_end(before)

    def finish(self, name: str) -> None:
        self._stop.set()
        self._thread.join(5)
        items: list[dict[str, Any]] = []
        page_id = None
        while True:
            params = {"limit": 100, **({"page_id": page_id} if page_id else {})}
            page = self.http.get(f"/api/conversations/{self.id}/events/search", params=params)
            page.raise_for_status()
            items += page.json()["items"]
            page_id = page.json()["next_page_id"]
            if not page_id:
                break
        record = {
            "info_created": self.info,
            "info_final": self.http.get(f"/api/conversations/{self.id}").json(),
            "frames": self.frames,
            "events": items,
            "rest": self.rest,
        }
        OUT.mkdir(parents=True, exist_ok=True)
        (OUT / f"{name}.json").write_text(scrub(json.dumps(record, indent=1)) + "\n")
        print(f"{name}: {len(self.frames)} frames, {len(items)} events")


def record_all(url: str, key: str, llm: ScriptedLLMServer) -> None:
    # A plain turn, plus the REST answers the client must cope with.
    llm.reply_text("Hello from the agent.")
    rec = Recorder(url, key, llm)
    rec.send("Say hello")
    rec.run()
    rec.rest["condense"] = _answer(rec.http.post(f"/api/conversations/{rec.id}/condense"))
    rec.rest["get_unknown"] = _answer(
        rec.http.get("/api/conversations/00000000-0000-4000-8000-000000000000")
    )
    rec.rest["bad_key"] = _answer(
        httpx.get(f"{url}/api/conversations/{rec.id}", headers={"X-Session-API-Key": "wrong"})
    )
    rec.rest["server_info"] = _answer(httpx.get(f"{url}/server_info"))
    llm.reply_text("Answer to the side question.")
    rec.rest["ask_agent"] = _answer(
        rec.http.post(f"/api/conversations/{rec.id}/ask_agent", json={"question": "why?"})
    )
    rec.finish("basic_turn")

    # A tool call under AlwaysConfirm: rejected, then another one accepted.
    rec = Recorder(url, key, llm)
    rec.http.post(
        f"/api/conversations/{rec.id}/confirmation_policy",
        json={"policy": {"kind": "AlwaysConfirm"}},
    ).raise_for_status()
    llm.reply_tool_call("terminal", {"command": "echo one"}, text="Running it.")
    rec.send("Run echo one")
    rec.run()
    before = rec.full_states()
    rec.http.post(
        f"/api/conversations/{rec.id}/events/respond_to_confirmation",
        json={"accept": False, "reason": "not now"},
    ).raise_for_status()
    time.sleep(1)
    llm.reply_tool_call("terminal", {"command": "echo two"})
    llm.reply_text("Done: two.")
    rec.send("Then echo two")
    rec.run()
    before = rec.full_states()
    rec.http.post(
        f"/api/conversations/{rec.id}/events/respond_to_confirmation", json={"accept": True}
    ).raise_for_status()
    rec.wait_run_end(before)
    rec.finish("confirm_reject")

    # Streaming deltas.
    llm.reply_text("Streamed words arrive one by one.", chunk_delay=0.02)
    rec = Recorder(url, key, llm, stream=True)
    rec.send("Stream please")
    rec.run()
    rec.finish("streaming")

    # A slow reply, interrupted; then a run that conflicts.
    llm.reply(Reply(text="too late", delay=6))
    rec = Recorder(url, key, llm)
    rec.send("Take your time")
    rec.http.post(f"/api/conversations/{rec.id}/run").raise_for_status()
    rec.wait_for(lambda f: f.get("key") == "execution_status" and f.get("value") == "running")
    rec.rest["run_conflict"] = _answer(rec.http.post(f"/api/conversations/{rec.id}/run"))
    rec.http.post(f"/api/conversations/{rec.id}/interrupt").raise_for_status()
    rec.wait_for(lambda f: f.get("kind") == "InterruptEvent")
    time.sleep(1)
    rec.finish("interrupt")

    # The model fails: the run ends in error.
    llm.reply_error(400, "the scripted model refuses")
    rec = Recorder(url, key, llm)
    rec.send("Fail please")
    rec.run()
    rec.finish("error")


def scrub(text: str) -> str:
    """This machine's paths, user and host out of a recording (the shapes stay)."""
    text = re.sub(r"/tmp/ohtui-peer-[a-z0-9_]+", "/srv/agent", text)
    text = re.sub(
        r'"py_interpreter_path": "[^"]*"', '"py_interpreter_path": "/usr/bin/python3"', text
    )
    text = re.sub(r'"hostname": "[^"]*"', '"hostname": "agent-host"', text)
    text = re.sub(r'"username": "[^"]*"', '"username": "agent"', text)
    return re.sub(r'"python_version": "[^"]*"', '"python_version": "3.12"', text)


def _answer(response: httpx.Response) -> dict[str, Any]:
    try:
        body: Any = response.json()
    except ValueError:
        body = response.text
    return {"status": response.status_code, "body": body}


def main() -> int:
    python = os.environ.get(PEER_ENV)
    if not python:
        print(f"set {PEER_ENV} to the peer venv's python (scripts/peer-agent-server.sh)")
        return 2
    with ScriptedLLMServer() as llm, peer_agent_server(python) as server:
        record_all(server.url, server.api_key, llm)
    return 0


if __name__ == "__main__":
    sys.exit(main())
