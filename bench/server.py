"""`ohtui serve` benchmarks for issue 14; run by hand: `.venv/bin/python bench/server.py
[ready] [events] [client] [scale] [memory]` (all by default).

Prints:
- start -> ready: from spawning `ohtui serve` to the first 200 from /ready, and to the first
  200 from an /api route (the engine loaded), medians of 5 starts;
- event latency: from the engine's callback (Served.on_event / on_token entered) to a
  WebSocket client's receipt on loopback, p50/p99/max over every frame of 20 streamed turns
  (the server in a probed process, once idle after its start-up; perf_counter is one
  system-wide clock on Linux);
- client latency: the same, to the callbacks the TUI gives our RemoteConversation (events
  and streamed tokens), the client decoding every frame as the TUI's does;
- memory: RSS of `ohtui serve` idle 5 s after start, and 5 s after 10 conversations were
  created (direct path);
- scale: one server, 100 idle + 10 running conversations, each running one followed by a
  WebSocket client: frames lost or duplicated (stored events vs received), and the time.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from user_env import ROOT, compile_bytecode, user_env

sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "server")]

import httpx  # noqa: E402
from llm_server import Reply, ScriptedLLMServer, ToolCall  # noqa: E402
from serve_helpers import Frames, create_payload, is_full_state, user_message  # noqa: E402
from server_process import TEST_KEY, ServerProcess  # noqa: E402


def start_to_ready(runs: int = 5) -> None:
    ready, engine, cpu = [], [], []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as data:
            server = ServerProcess(Path(data), env=user_env())
            started = time.perf_counter()
            server.start(wait=False)
            try:
                server.wait_ready()
                ready.append(time.perf_counter() - started)
                cpu.append(server.cpu_seconds())
                while True:
                    response = httpx.get(
                        server.url + "/api/conversations/count", headers=server.headers, timeout=30
                    )
                    if response.status_code == 200:
                        break
                engine.append(time.perf_counter() - started)
            finally:
                server.stop()
    print(
        f"start -> /ready 200: median {statistics.median(ready) * 1000:.0f} ms "
        f"(max {max(ready) * 1000:.0f} ms); start -> first /api answer (engine loaded): "
        f"median {statistics.median(engine) * 1000:.0f} ms; CPU the server had used when "
        f"/ready answered: median {statistics.median(cpu) * 1000:.0f} ms (wall times stretch "
        "with the machine's load)"
    )


def _probed_server() -> tuple[ServerProcess, Path, Path]:
    """`ohtui serve` under bench/server_probe.py, started: (it, its data dir with a `ws`
    workspace, the file the probe writes the callback times to when it stops)."""
    data = Path(tempfile.mkdtemp())
    (data / "ws").mkdir()
    probe_out = data / "published.json"
    server = ServerProcess(data, env=user_env(OHTUI_BENCH_PROBE_OUT=str(probe_out)))
    server.command = [sys.executable, str(ROOT / "bench" / "server_probe.py")]
    server.start()
    _settle(server)
    return server, data, probe_out


def _settle(server: ServerProcess, timeout: float = 60.0) -> None:
    """Wait until the server is idle: it imports litellm on a thread once its engine is
    loaded (seconds of CPU), and frames sent meanwhile wait for that thread (GIL)."""
    deadline = time.monotonic() + timeout
    last = server.cpu_seconds()
    while time.monotonic() < deadline:
        time.sleep(0.5)
        now = server.cpu_seconds()
        if now - last < 0.05:
            return
        last = now


def _latency_line(latencies: list[float]) -> str:
    """`N frames, p50, p99, max` of latencies in ms."""
    ms = sorted(latencies)
    p99 = ms[max(0, int(len(ms) * 0.99) - 1)]
    return (
        f"{len(ms)} frames, p50 {statistics.median(ms):.2f} ms, p99 {p99:.2f} ms, "
        f"max {ms[-1]:.2f} ms (target p99 <= 20 ms)"
    )


def event_latency(turns: int = 20) -> None:
    """The server runs in its own process (bench/server_probe.py records its callback times);
    this process is the WebSocket client and the scripted LLM."""
    llm = ScriptedLLMServer()
    server, data, probe_out = _probed_server()
    client = server.client()
    while client.get("/api/conversations/count").status_code != 200:
        time.sleep(0.05)
    payload = create_payload(llm, data / "ws")
    payload["agent"]["llm"]["stream"] = True
    cid = client.post("/api/conversations", json=payload).json()["id"]
    received: dict[str, float] = {}

    def stamp(frame: dict[str, Any]) -> None:
        received[frame["id"]] = time.perf_counter()

    frames = Frames(f"{server.ws_url}/sockets/events/{cid}", TEST_KEY, on_frame=stamp)
    frames.wait_for(is_full_state("idle"))
    for turn in range(turns):
        llm.reply_tool_call("terminal", {"command": f"echo {turn}", "security_risk": "LOW"})
        llm.reply_text(" ".join(f"word{n}" for n in range(30)), chunk_delay=0.002)
        client.post(f"/api/conversations/{cid}/events", json=user_message(f"turn {turn}", run=True))
        deadline = time.monotonic() + 60
        while _turns(frames) <= turn:
            assert time.monotonic() < deadline, f"a turn did not finish in 60 s: {server.log()}"
            time.sleep(0.01)
    frames.close()
    server.stop()
    llm.close()
    published = json.loads(probe_out.read_text())
    latencies = [(received[i] - published[i]) * 1000 for i in received if i in published]
    print(
        "event latency, engine callback -> WebSocket client, loopback: " + _latency_line(latencies)
    )


def client_latency(turns: int = 20) -> None:
    """From the engine's callback on the server to the TUI's callbacks on RemoteConversation."""
    from pydantic import SecretStr

    from ohtui.sdk import LLM, Agent, Conversation, RemoteWorkspace, Tool
    from ohtui.sdk.llm import LLMStreamChunk

    llm = ScriptedLLMServer()
    server, data, probe_out = _probed_server()
    received: dict[str, float] = {}

    def on_event(event: Any) -> None:
        received.setdefault(event.id, time.perf_counter())

    def on_token(chunk: LLMStreamChunk) -> None:
        received.setdefault("content:" + chunk.content, time.perf_counter())

    model = LLM(
        model="openai/test-model",
        base_url=llm.base_url,
        api_key=SecretStr("sk-bench"),
        usage_id="agent",
        stream=True,
    )
    workspace = RemoteWorkspace(host=server.url, api_key=TEST_KEY, working_dir=str(data / "ws"))
    conversation = Conversation(
        Agent(llm=model, tools=[Tool(name="terminal")]),
        workspace=workspace,
        callbacks=[on_event],
        token_callbacks=[on_token],
        visualizer=None,
        autotitle=False,
    )
    for turn in range(turns):
        llm.reply_tool_call("terminal", {"command": f"echo {turn}", "security_risk": "LOW"})
        words = [f"t{turn}w{n} " for n in range(30)]
        llm.reply(Reply(text="".join(words), chunks=tuple(words), chunk_delay=0.002))
        conversation.send_message(f"turn {turn}")
        conversation.run()
    conversation.close()
    server.stop()
    llm.close()
    published = json.loads(probe_out.read_text())
    for name, keys in (
        ("events", [k for k in received if not k.startswith("content:")]),
        ("tokens", [k for k in received if k.startswith("content:")]),
        ("all", list(received)),
    ):
        ms = [(received[k] - published[k]) * 1000 for k in keys if k in published]
        print(
            f"client latency ({name}), engine callback -> RemoteConversation callback: "
            + _latency_line(ms)
        )


def _turns(frames: Frames) -> int:
    return sum(1 for f in frames.frames if is_full_state("finished")(f))


def _echo_then_done(body: dict[str, Any]) -> Reply:
    if body["messages"][-1]["role"] == "tool":
        return Reply(text="done")
    arguments = json.dumps({"command": "echo hi", "security_risk": "LOW"})
    return Reply(tool_calls=(ToolCall("terminal", arguments),))


def scale(idle: int = 100, running: int = 10) -> None:
    llm = ScriptedLLMServer()
    llm.set_default(_echo_then_done)
    with tempfile.TemporaryDirectory() as data:
        (Path(data) / "ws").mkdir()
        server = ServerProcess(Path(data), env=user_env()).start()
        try:
            client = server.client()
            payload = create_payload(llm, Path(data) / "ws")
            ids = [
                client.post("/api/conversations", json=payload).json()["id"]
                for _ in range(idle + running)
            ]
            busy = ids[:running]
            sockets = {
                cid: Frames(f"{server.ws_url}/sockets/events/{cid}", TEST_KEY) for cid in busy
            }
            for frames in sockets.values():
                frames.wait_for(is_full_state("idle"))
            started = time.perf_counter()
            for cid in busy:
                client.post(f"/api/conversations/{cid}/events", json=user_message("go", run=True))
            lost = duplicated = received = 0
            for cid, frames in sockets.items():
                frames.wait_for(is_full_state("finished"), timeout=300)
                stored = [
                    e["id"]
                    for e in client.get(f"/api/conversations/{cid}/events/search").json()["items"]
                ]
                seen = [
                    f["id"] for f in frames.frames if f["kind"] != "ConversationStateUpdateEvent"
                ]
                received += len(frames.frames)
                lost += len(set(stored) - set(seen))
                duplicated += len(seen) - len(set(seen))
                frames.close()
            took = time.perf_counter() - started
            idle_ok = all(
                client.get(f"/api/conversations/{cid}").json()["execution_status"] == "idle"
                for cid in ids[running:]
            )
            print(
                f"scale: {idle} idle + {running} running conversations on one server: {received} "
                f"frames received, {lost} lost, {duplicated} duplicated (target 0); the runs took "
                f"{took:.1f} s; idle ones still idle: {idle_ok}"
            )
        finally:
            server.stop()
            llm.close()


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def memory(conversations: int = 10, model: str | None = None) -> None:
    """Resident memory of `ohtui serve`: idle 5 s after start, then 5 s after creating
    `conversations` conversations on the direct path (`openai/<model>` + base_url), or with
    `model` through litellm when given (its warm-up imports litellm)."""
    llm = ScriptedLLMServer()
    with tempfile.TemporaryDirectory() as data:
        (Path(data) / "ws").mkdir()
        server = ServerProcess(Path(data), env=user_env()).start()
        try:
            assert server.process is not None
            _settle(server)
            time.sleep(5)
            idle = _rss_mb(server.process.pid)
            client = server.client()
            payload = create_payload(llm, Path(data) / "ws")
            if model is not None:
                payload["agent"]["llm"] = {"model": model, "api_key": "sk-none", "usage_id": "a"}
            for _ in range(conversations):
                client.post("/api/conversations", json=payload).raise_for_status()
            _settle(server)
            time.sleep(5)
            busy = _rss_mb(server.process.pid)
            path = "direct path" if model is None else f"{model} through litellm"
            print(
                f"serve memory: idle {idle:.0f} MB (target <= 120 MB; was 252 MB); with "
                f"{conversations} conversations ({path}) {busy:.0f} MB (was 280 MB)"
            )
        finally:
            server.stop()
            llm.close()


def main() -> None:
    compile_bytecode()
    with open("/proc/loadavg") as file:
        print(f"load average: {file.read().split()[0]} on {os.cpu_count()} cores")
    parts = {"ready": start_to_ready, "events": event_latency, "client": client_latency}
    parts["scale"] = scale
    parts["memory"] = memory
    parts["memory-litellm"] = lambda: memory(model="anthropic/claude-sonnet-4-5")
    for name in sys.argv[1:] or list(parts):
        parts[name]()


if __name__ == "__main__":
    main()
