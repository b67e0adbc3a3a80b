"""Long-work benchmarks for issue 13; run by hand: `.venv/bin/python bench/long_run.py`.

Prints, next to each target:
- a 2,000-step run (one `think` call per step, persisted, no condenser) against an instant
  scripted LLM server in its own process: at steps 10, 100, 1,000 and 2,000 the LLM call
  overhead (the time inside `LLM.completion` outside the server's handling of the request,
  from the server's own timestamps) and the engine time per step (a step's wall time
  outside `LLM.completion`), each the median of the ten steps up to that step;
- the resident memory of an engine process holding a conversation of 0, 1,000 and 10,000
  events (resumed, one step run so the agent has built its history), without and with a
  condenser;
- first message -> request: the real TUI on a pseudo-terminal, the first frame idle for
  2.5 s, then a message typed; the time until the scripted server has the request;
- the short-work figures of `bench/engine.py` (import, appends, resume).

`python bench/long_run.py steps rss first short` picks parts (`tui` adds the TUI's memory
with a 10,000-event conversation after an answer, from `bench/tui.py`); `--steps N` sets the
run's length; `--model M` the model the figures are taken with (default `openai/test-model`).

Which providers take which path (`ohtui.sdk.llm.direct.serves`, `history_splice.PROVIDERS`):
- direct HTTP (`ohtui/sdk/llm/direct.py`, no litellm on the call): `openai/<model>` and
  `litellm_proxy/<model>` with a base URL (any OpenAI-compatible server, a LiteLLM proxy);
- litellm, the history spliced (`ohtui/sdk/llm/history_splice.py`: litellm's provider code
  builds each request, but is given only the head and the turns it has not translated
  yet; the turns it translated before are put back into the body on the way out):
  `anthropic/<model>` (Anthropic's Messages API) and `hosted_vllm/<model>`;
- litellm with the whole history on every call: every other provider — OpenAI itself
  (`openai/` without a base URL: litellm's OpenAI SDK client), `azure/`, `bedrock/` (its
  bodies are signed), `vertex_ai/` and `gemini/` (no `messages` in their bodies),
  `openrouter/`, `ollama/`, … A provider joins the spliced ones when tests show its body
  comes out as litellm builds it with the whole history (`tests/sdk/llm/test_history_splice.py`).

Measure the litellm path with `--model hosted_vllm/test-model` (OpenAI-compatible, through
litellm's provider code) or `--model anthropic/claude-sonnet-4-5` (the scripted server
speaks Anthropic's Messages API at `/v1/messages`; the base URL given is without `/v1`).
"""

from __future__ import annotations

import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

from user_env import compile_bytecode

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))  # the scripted LLM server
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

REPORT_AT = (10, 100, 1000, 2000)
WINDOWS = ((10, 110), (1900, 2000))
"""The windows issue 30 compares (the LLM call's overhead at the end against the start)."""
MODEL = "openai/test-model"
"""The model the figures are taken with (`--model`)."""
THOUGHT = "Checking the next item of the list, and noting what I found about it. " * 2


def serve() -> None:
    """The scripted server's process: a think call per request; its timings on stdin EOF."""
    from llm_server import Reply, ScriptedLLMServer, ToolCall

    server = ScriptedLLMServer()

    def reply(body: dict[str, Any]) -> Reply:
        step = len(server.requests)
        return Reply(tool_calls=(ToolCall("think", json.dumps({"thought": f"{step}: {THOUGHT}"})),))

    server.set_default(reply)
    print(server.base_url, flush=True)
    sys.stdin.read()
    print(json.dumps(server.request_times), flush=True)
    server.close()


def bench_steps(steps: int) -> None:
    from ohtui.sdk import LLM, Agent, Conversation, Tool

    proc = subprocess.Popen(
        [sys.executable, __file__, "--serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdin is not None
    base_url = proc.stdout.readline().strip()
    calls: list[tuple[float, float]] = []
    call_cpu: list[float] = []

    class TimedLLM(LLM):
        def completion(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            start, cpu = time.monotonic(), time.process_time()
            try:
                return super().completion(*args, **kwargs)
            finally:
                calls.append((start, time.monotonic()))
                call_cpu.append(time.process_time() - cpu)

    with tempfile.TemporaryDirectory() as tmp:
        llm = TimedLLM(model=MODEL, base_url=api_base(base_url), api_key="sk-bench")
        conv = Conversation(
            agent=Agent(llm=llm, tools=[Tool(name="terminal"), Tool(name="file_editor")]),
            workspace=f"{tmp}/ws",
            persistence_dir=f"{tmp}/convs",
            visualizer=None,
            max_iteration_per_run=steps,
        )
        conv.send_message(f"think {steps} times")
        llm.completion([{"role": "user", "content": "warm up"}])  # import litellm, connect
        calls.clear()
        call_cpu.clear()
        step_starts: list[float] = []
        step_cpu: list[float] = []
        original_step = conv.agent.step

        def timed_step(*args, **kwargs):  # type: ignore[no-untyped-def]
            step_starts.append(time.monotonic())
            step_cpu.append(time.process_time())
            return original_step(*args, **kwargs)

        object.__setattr__(conv.agent, "step", timed_step)
        started = time.monotonic()
        conv.run()
        step_starts.append(time.monotonic())
        step_cpu.append(time.process_time())
        total = time.monotonic() - started
        conv.close()
    out, _ = proc.communicate("")
    served = json.loads(out)[1:]  # the first was the warm-up call
    # One step asks the model and runs the think call it answers with.
    asking = list(itertools.pairwise(step_starts))
    per_call = []
    for (call_start, call_end), (got, sent) in zip(calls, served, strict=False):
        per_call.append(((call_end - call_start) - (sent - got)) * 1000)
    engine = []
    call_index = 0
    for start, end in asking:
        inside = 0.0
        while call_index < len(calls) and calls[call_index][0] < end:
            if calls[call_index][0] >= start:
                inside += calls[call_index][1] - calls[call_index][0]
            call_index += 1
        engine.append(((end - start) - inside) * 1000)
    agent_steps = engine
    # CPU time of this process (all its threads; the server has its own): what the work
    # costs, whatever else the machine is doing.
    engine_cpu = [
        (b - a - c) * 1000 for a, b, c in zip(step_cpu, step_cpu[1:], call_cpu, strict=False)
    ]
    print(f"model {MODEL}")
    print(f"{len(per_call):,}-step run in {total:.1f} s (load: {os.getloadavg()[0]:.2f}):")
    for at in REPORT_AT:
        if at > len(per_call):
            break
        window = slice(max(0, at - 10), at)
        print(
            f"  step {at:>5,}: LLM call overhead {statistics.median(per_call[window]):6.2f} ms "
            f"(CPU {statistics.median(call_cpu[window]) * 1000:5.2f} ms), engine "
            f"{statistics.median(agent_steps[window]):5.2f} ms/step "
            f"(CPU {statistics.median(engine_cpu[window]):5.2f} ms)"
        )
    for first, last in WINDOWS:
        if last > len(per_call):
            break
        window = slice(first - 1, last)
        print(
            f"  steps {first:,}-{last:,}: LLM call overhead "
            f"{statistics.median(per_call[window]):6.2f} ms (CPU "
            f"{statistics.median(call_cpu[window]) * 1000:5.2f} ms), median of {last - first + 1}"
        )
    print("  target: overhead flat within 2x, <= 10 ms at step 2,000; engine <= 3 ms/step")
    print("  (wall figures: medians of the 10 steps up to each; CPU: this process's CPU time)")


RSS_SCRIPT = textwrap.dedent(
    """
    import sys, uuid
    from ohtui.sdk import LLM, Agent, Conversation, Tool
    from ohtui.sdk.context import LLMSummarizingCondenser
    base, conv_id, base_url, condensed, model = sys.argv[1:6]
    def rss_mb():
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS"):
                    return int(line.split()[1]) / 1024
    llm = LLM(model=model, base_url=base_url, api_key="sk-bench")
    llm.completion([{"role": "user", "content": "warm up"}])  # litellm imported
    condenser = None
    if condensed == "1":
        condenser = LLMSummarizingCondenser(
            llm=llm.model_copy(update={"usage_id": "condenser"}), max_size=80, keep_first=4
        )
    agent = Agent(llm=llm, tools=[Tool(name="terminal")], condenser=condenser)
    kwargs = {"conversation_id": uuid.UUID(conv_id)} if conv_id != "-" else {}
    conv = Conversation(agent=agent, workspace=base, persistence_dir=base + "/convs",
                        visualizer=None, **kwargs)
    conv.send_message("one more thing")
    conv.run()
    import gc; gc.collect()
    print(len(conv.state.events), rss_mb())
    """
)


def bench_rss(sizes: tuple[int, ...] = (0, 1000, 10_000)) -> None:
    from llm_server import Reply, ScriptedLLMServer
    from tui import make_conversation

    server = ScriptedLLMServer()
    server.set_default(Reply(text="USER_CONTEXT: a summary. Done."))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        ids = {n: make_conversation(f"{tmp}/convs", tmp, n, "END") if n else "-" for n in sizes}
        for condensed in ("0", "1"):
            figures = []
            for n in sizes:
                out = subprocess.run(
                    [
                        sys.executable,
                        "-c",
                        RSS_SCRIPT,
                        tmp,
                        ids[n],
                        api_base(server.base_url),
                        condensed,
                        MODEL,
                    ],
                    check=True,
                    capture_output=True,
                    text=True,
                ).stdout.split()
                figures.append((n, int(out[0]), float(out[1])))
            rows.append((condensed, figures))
    server.close()
    for condensed, figures in rows:
        label = "with a condenser" if condensed == "1" else "no condenser    "
        text = ", ".join(f"{n:,} events {mb:.0f} MB" for n, _, mb in figures)
        base = figures[0][2]
        print(f"engine RSS, {label}: {text} (+{figures[-1][2] - base:.0f} MB at the largest)")


def bench_first_message(runs: int = 3) -> None:
    from llm_server import Reply, ScriptedLLMServer
    from tui import Terminal, isolated_env, ohtui_argv

    server = ScriptedLLMServer()
    server.set_default(Reply(text="Hello there."))
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        env = isolated_env(tmp, api_key=True)
        url = api_base(server.base_url)
        argv = ohtui_argv("-w", tmp, "--model", MODEL, "--base-url", url)
        for _ in range(runs):
            before = len(server.request_times)
            term = Terminal(argv, env)
            try:
                term.wait_for("Message the agent")
                idle_until = time.monotonic() + 2.5
                while time.monotonic() < idle_until:
                    term.pump(0.05)
                sent = time.monotonic()
                term.type("hello\r")
                deadline = sent + 180  # litellm's import takes seconds, more under load
                while len(server.request_times) == before and time.monotonic() < deadline:
                    term.pump(0.01)
                if len(server.request_times) == before:
                    results.append(float("inf"))  # no request in time
                    continue
                results.append(server.request_times[before][0] - sent)
            finally:
                term.kill()
    server.close()
    print(
        f"first message -> request reaches the LLM: {statistics.median(results):.3f} s "
        f"(runs: {', '.join(f'{r:.3f}' for r in results)}; load "
        f"{os.getloadavg()[0]:.2f}; {MODEL})   target <= 0.3 s direct, <= 0.5 s through litellm"
    )


def api_base(base_url: str) -> str:
    """The base URL to give `MODEL`: litellm adds `/v1/messages` to Anthropic's."""
    return base_url.removesuffix("/v1") if MODEL.startswith("anthropic/") else base_url


def bench_tui_memory() -> None:
    from tui import bench_memory

    bench_memory((10_000,), model=MODEL, base_url=api_base)


def bench_short() -> None:
    from engine import bench_append, bench_import, bench_resume

    bench_import()
    bench_append()
    bench_resume()


if __name__ == "__main__":
    if "--serve" in sys.argv:
        serve()
        sys.exit(0)
    args = sys.argv[1:]
    steps = 2000
    if "--steps" in args:
        at = args.index("--steps")
        steps = int(args[at + 1])
        del args[at : at + 2]
    if "--model" in args:
        at = args.index("--model")
        MODEL = args[at + 1]
        del args[at : at + 2]
    which = set(args) or {"steps", "rss", "first", "short"}
    compile_bytecode()
    uptime = subprocess.run(["uptime"], check=False, capture_output=True, text=True).stdout
    print(f"uptime: {uptime.strip()}")
    if "steps" in which:
        bench_steps(steps)
    if "rss" in which:
        bench_rss()
    if "first" in which:
        bench_first_message()
    if "tui" in which:
        bench_tui_memory()
    if "short" in which:
        bench_short()
