"""MCP benchmarks for issue 15; run by hand: `.venv/bin/python bench/mcp.py [ready|calls|frame]`.

- first frame with two stdio MCP servers configured (mcp-server-time and our test server),
  against a bare Textual app and ohtui without servers, the three interleaved run by run,
  on a real pseudo-terminal (target <= 1.1x);
- tools ready after the servers answer `initialize`: for each server, from the answer to its
  tools being offered, and for the agent, from the last answer to its tools being resolved
  (target <= 1 s);
- per-call overhead: an MCP call through the client manager against the same call sent as a
  raw JSON-RPC line to the same kind of server, no SDK (target <= 5 ms).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
from tui import BARE_APP, Terminal, ohtui_argv

ROOT = Path(__file__).resolve().parent.parent
# This file is bench/mcp.py: its folder must not shadow the `mcp` package once `tui` is in.
sys.path.remove(str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT / "tests"))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from mcp_servers import ours, time_server  # noqa: E402

from ohtui.sdk.mcp import MCPClientManager, parse_servers  # noqa: E402

CALLS = 200


def _config(tmp: str) -> str:
    """config.toml with two stdio servers."""
    time_spec, ours_spec = time_server(), ours()
    path = Path(tmp, "config.toml")
    path.write_text(
        "[mcp.servers.time]\n"
        f"command = {json.dumps(time_spec['command'])}\n"
        f"args = {json.dumps(time_spec['args'])}\n\n"
        "[mcp.servers.calc]\n"
        f"command = {json.dumps(ours_spec['command'])}\n"
        f"args = {json.dumps(ours_spec['args'])}\n"
    )
    return str(path)


def bench_first_frame(runs: int = 25) -> None:
    """Median time to the first frame, interleaved run by run: a bare Textual app, ohtui
    without MCP servers, and ohtui with two stdio servers configured."""
    with tempfile.TemporaryDirectory() as tmp:
        configs = {"bare": "", "ohtui": "", "ohtui + 2 MCP": _config(tmp)}
        Path(tmp, "empty.toml").write_text("")
        bare_script = Path(tmp, "bare.py")
        bare_script.write_text(BARE_APP)
        ohtui = ohtui_argv("--model", "openai/bench", "-w", tmp)
        seconds: dict[str, list[float]] = {name: [] for name in configs}
        cpu: dict[str, list[float]] = {name: [] for name in configs}
        for _ in range(runs):
            for name, config in configs.items():
                env = {
                    "OHTUI_DATA_DIR": f"{tmp}/data",
                    "OHTUI_LOG_DIR": f"{tmp}/log",
                    "OHTUI_CONFIG": config or str(Path(tmp, "empty.toml")),
                }
                bare = name == "bare"
                argv = [sys.executable, str(bare_script)] if bare else ohtui
                term = Terminal(argv, env)
                children: list[psutil.Process] = []
                try:
                    seconds[name].append(term.wait_for("BAREFRAME" if bare else "Message the"))
                    cpu[name].append(term.cpu_seconds())  # the CPU the first frame took
                    # Its two servers start once the first frame has been idle: let them.
                    deadline = time.monotonic() + (10 if config else 0)
                    while len(children) < 2 and time.monotonic() < deadline:
                        children = psutil.Process(term.pid).children(recursive=True)
                        time.sleep(0.05)
                finally:
                    term.kill()
                # The servers it started end with it: let them go before the next run, which
                # would otherwise share the CPU with their start-up.
                psutil.wait_procs(children, timeout=30)
        medians = {name: statistics.median(times) for name, times in seconds.items()}
        base = medians["bare"]
        shown = ", ".join(f"{name} {m:.3f} s ({m / base:.2f}x)" for name, m in medians.items())
        cpus = {name: statistics.median(times) for name, times in cpu.items()}
        cpu_shown = ", ".join(
            f"{name} {c:.3f} s ({c / cpus['bare']:.2f}x)" for name, c in cpus.items()
        )
        print(
            f"first frame (median of {runs}, interleaved): {shown}; with two stdio MCP servers "
            f"{medians['ohtui + 2 MCP'] / base:.2f}x a bare Textual app (target <= 1.1x); "
            f"CPU to the first frame: {cpu_shown}; load average {os.getloadavg()[0]:.1f}"
        )


def bench_ready(runs: int = 5) -> None:
    """From `initialize` answered to tools offered, per server and for the agent."""
    per_server: list[float] = []
    agent: list[float] = []
    for _ in range(runs):
        manager = MCPClientManager(parse_servers({"time": time_server(), "calc": ours()}))
        manager.start()
        manager.wait_settled(60)
        settled = time.monotonic()
        infos = manager.servers()
        manager.close()
        times = [(i.initialized_at, i.ready_at) for i in infos]
        answered = [(start, end) for start, end in times if start is not None and end is not None]
        assert len(answered) == len(infos), [i.summary for i in infos]
        per_server += [end - start for start, end in answered]
        agent.append(settled - max(start for start, _ in answered))
    print(
        f"tools ready after `initialize` answered: per server median "
        f"{statistics.median(per_server) * 1000:.1f} ms (max {max(per_server) * 1000:.1f} ms); "
        f"the agent has them {statistics.median(agent) * 1000:.1f} ms after the last answer "
        f"(max {max(agent) * 1000:.1f} ms) (target <= 1 s)"
    )


def _raw_calls(count: int) -> list[float]:
    """`tools/call add` as raw JSON-RPC lines to our stdio server: the server's own time."""
    spec = ours()
    process = subprocess.Popen(
        [spec["command"], *spec["args"]],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdin is not None and process.stdout is not None

    def send(message: dict[str, object]) -> None:
        process.stdin.write(json.dumps(message) + "\n")  # type: ignore[union-attr]
        process.stdin.flush()  # type: ignore[union-attr]

    init = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "b"}}
    send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init})
    process.stdout.readline()
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    times = []
    for i in range(1, count + 1):
        params = {"name": "add", "arguments": {"a": i, "b": 1}}
        started = time.perf_counter()
        send({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": params})
        process.stdout.readline()
        times.append(time.perf_counter() - started)
    process.stdin.close()
    process.wait(10)
    return times


def _manager_calls(count: int) -> list[float]:
    """The same call through the client manager (what every MCP tool call goes through)."""
    manager = MCPClientManager(parse_servers({"calc": ours()}))
    manager.start()
    manager.wait_settled(60)
    times = []
    cpu = time.process_time()
    try:
        for i in range(count):
            started = time.perf_counter()
            result = manager.call("calc", "add", {"a": i, "b": 1})
            times.append(time.perf_counter() - started)
            assert result.text == str(i + 1), result.text
        _CPU.append((time.process_time() - cpu) / count)
    finally:
        manager.close()
    return times


_CPU: list[float] = []
"""This process's CPU time per call through the manager (both threads: ours and the SDK's)."""


def bench_call_overhead() -> None:
    """Median per-call time through the manager minus the raw round trip."""
    _manager_calls(20)  # warm up imports and caches
    raw = statistics.median(_raw_calls(CALLS))
    ours_ = statistics.median(_manager_calls(CALLS))
    load = os.getloadavg()[0]
    print(
        f"per-call: raw JSON-RPC {raw * 1000:.2f} ms, through ohtui {ours_ * 1000:.2f} ms -> "
        f"overhead {(ours_ - raw) * 1000:.2f} ms (target <= 5 ms; median of {CALLS}); "
        f"client CPU {_CPU[-1] * 1000:.2f} ms a call; load average {load:.1f} on "
        f"{os.cpu_count()} cores (each hop between the SDK's tasks waits for a core)"
    )


BENCHES = {"ready": bench_ready, "calls": bench_call_overhead, "frame": bench_first_frame}

if __name__ == "__main__":
    for name in sys.argv[1:] or list(BENCHES):  # e.g. `bench/mcp.py calls`
        BENCHES[name]()
