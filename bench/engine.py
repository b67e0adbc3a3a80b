"""Engine benchmarks for issue 2; run by hand: `.venv/bin/python bench/engine.py`.

Prints, next to each target (`engine.py [import|append|resume|steps]...` for some):
- the wall and CPU time of `python -c "import ohtui.sdk"` (median of runs), and of
  importing it and making a first LLM, Agent and Conversation;
- user messages appended to a persisted conversation per second;
- the time and extra memory to resume a 10,000-event conversation;
- the engine's own work per step in a 200-step run against an instant scripted LLM
  (step time minus the time spent inside LLM.completion), early steps vs late steps;
- the conversation tree on a resumed 10,000-event conversation: `active_branch()` (first
  call, and after an append), `navigate_to` an event halfway and the next message on the
  new branch, `fork(from_event_id=...)` there and a full `fork()`.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from user_env import compile_bytecode, user_env

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))  # the scripted LLM server
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


READY_SCRIPT = (
    "import tempfile\n"
    "from ohtui.sdk import LLM, Agent, Conversation\n"
    "with tempfile.TemporaryDirectory() as tmp:\n"
    "    Conversation(agent=Agent(llm=LLM(model='openai/none'), tools=[]), workspace=tmp,\n"
    "                 persistence_dir=tmp + '/c', visualizer=None).close()\n"
)
"""What a script does before its first message: import, then make an LLM, an agent and a
conversation (parts the import leaves to first use are paid here)."""


def _run_timed(code: str, env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of `python -c code`."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu


def bench_import(runs: int = 7) -> None:
    compile_bytecode()
    env = user_env()
    imported: list[tuple[float, float]] = []
    ready: list[tuple[float, float]] = []
    bare: list[tuple[float, float]] = []
    for _ in range(runs):  # interleaved, so each sees the same machine load
        imported.append(_run_timed("import ohtui.sdk", env))
        ready.append(_run_timed(READY_SCRIPT, env))
        bare.append(_run_timed("pass", env))

    def medians(pairs: list[tuple[float, float]]) -> str:
        wall = statistics.median(p[0] for p in pairs)
        cpu = statistics.median(p[1] for p in pairs)
        return f"{wall:.3f} s wall, {cpu:.3f} s CPU"

    with open("/proc/loadavg") as file:
        load = file.read().split()[0]
    print(f"load average {load} on {os.cpu_count()} cores; python alone: {medians(bare)}")
    print(f"import ohtui.sdk: {medians(imported)}   target <= 0.200 s CPU (was 0.44 s CPU)")
    print(f"import + LLM, Agent, Conversation made: {medians(ready)}")


def bench_append(count: int = 3000, blocks: int = 6) -> None:
    """User messages appended, in blocks taking turns with the store alone committing the
    same rows (the disk's floor), so both are measured in the same minutes."""
    from ohtui.sdk import LLM, Agent, Conversation
    from ohtui.sdk.conversation.store import StoredEvent

    per_block = count // blocks
    with tempfile.TemporaryDirectory() as tmp:
        agent = Agent(llm=LLM(model="openai/none"), tools=[])
        conv = Conversation(
            agent=agent, workspace=f"{tmp}/ws", persistence_dir=f"{tmp}/convs", visualizer=None
        )
        conv.send_message("warm up")
        log = conv.state.events
        data = log[-1].model_dump_json()
        engine = store = 0.0
        for block in range(blocks):
            start = time.perf_counter()
            for i in range(per_block):
                conv.send_message(f"message number {i}: please look at the file and fix the bug")
            engine += time.perf_counter() - start
            start = time.perf_counter()
            for i in range(per_block):
                row = StoredEvent(f"floor-{block}-{i}", "MessageEvent", data, "please look", None)
                log._store.append_many(log._key, [row])
            store += time.perf_counter() - start
        size = sum(p.stat().st_size for p in Path(tmp, "convs").glob("conversations.db*"))
        conv.close()
    total = per_block * blocks
    print(
        f"append user messages: {total / engine:,.0f} events/s "
        f"({size / (2 * total + 2) / 1024:.2f} KB of disk per event)   target >= 2,500/s"
    )
    print(
        f"  the disk's floor, in the same minutes: the store alone commits the same rows at "
        f"{total / store:,.0f}/s (the engine adds {1e6 * (engine - store) / total:.0f} us "
        "a message)"
    )


RESUME_SCRIPT = textwrap.dedent(
    """
    import resource, sys, time, uuid
    from ohtui.sdk import LLM, Agent, Conversation
    base, conv_id = sys.argv[1], uuid.UUID(sys.argv[2])
    def rss_mb():
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS"):
                    return int(line.split()[1]) / 1024
    agent = Agent(llm=LLM(model="openai/none"), tools=[])
    before = rss_mb()
    start = time.perf_counter()
    conv = Conversation(agent=agent, workspace=base + "/ws", persistence_dir=base + "/convs",
                        conversation_id=conv_id, visualizer=None)
    n = len(conv.state.events)
    tail = conv.state.events[-50:]
    elapsed = time.perf_counter() - start
    shown = conv.state.active_branch()[-50:]  # what a screen shows first
    print(n, elapsed, rss_mb() - before, time.perf_counter() - start)
    """
)


def bench_resume(count: int = 10_000) -> None:
    from ohtui.sdk import LLM, Agent, Conversation

    with tempfile.TemporaryDirectory() as tmp:
        ids = {}
        for name, n in (("empty", 0), ("big", count)):
            conv = Conversation(
                agent=Agent(llm=LLM(model="openai/none"), tools=[]),
                workspace=f"{tmp}/ws",
                persistence_dir=f"{tmp}/convs",
                visualizer=None,
            )
            for i in range(n):
                conv.send_message(f"message {i}: " + "some realistic text " * 10)
            ids[name] = conv.id
            conv.close()
        results = {}
        for name, conv_id in ids.items():
            out = subprocess.run(
                [sys.executable, "-c", RESUME_SCRIPT, tmp, str(conv_id)],
                check=True,
                capture_output=True,
                text=True,
            ).stdout.split()
            results[name] = (int(out[0]), float(out[1]), float(out[2]), float(out[3]))
    events, seconds, mem, branch = results["big"]
    _, empty_seconds, empty_mem, _ = results["empty"]
    print(
        f"resume {events:,}-event conversation: {seconds:.3f} s (empty: {empty_seconds:.3f} s), "
        f"+{mem - empty_mem:.1f} MB vs empty   target <= 0.200 s, <= +30 MB"
    )
    print(f"  and its active branch's last 50 events read: {branch:.3f} s from the start")


def bench_steps(steps: int = 200) -> None:
    from llm_server import Reply, ScriptedLLMServer, ToolCall

    from ohtui.sdk import LLM, Agent, Conversation, Tool
    from ohtui.sdk.event import ActionEvent

    server = ScriptedLLMServer()
    counter = {"n": 0}

    def reply(_request: dict) -> Reply:
        counter["n"] += 1
        if counter["n"] >= steps:
            return Reply(tool_calls=(ToolCall("finish", '{"message": "done"}'),))
        thought = json.dumps({"thought": f"step {counter['n']}"})
        return Reply(tool_calls=(ToolCall("think", thought),))

    server.set_default(reply)
    llm_time: list[float] = []

    class TimedLLM(LLM):
        def completion(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            start = time.perf_counter()
            try:
                return super().completion(*args, **kwargs)
            finally:
                llm_time.append(time.perf_counter() - start)

    step_marks: list[float] = []

    def on_event(event: object) -> None:
        if isinstance(event, ActionEvent):
            step_marks.append(time.perf_counter())

    with tempfile.TemporaryDirectory() as tmp:
        llm = TimedLLM(model="openai/test-model", base_url=server.base_url, api_key="sk-x")
        conv = Conversation(
            agent=Agent(llm=llm, tools=[Tool(name="terminal"), Tool(name="file_editor")]),
            workspace=f"{tmp}/ws",
            persistence_dir=f"{tmp}/convs",
            visualizer=None,
            callbacks=[on_event],
            max_iteration_per_run=steps + 5,
            checkpoints=True,  # as ohtui opens conversations: only changing actions pay
        )
        conv.send_message("think 200 times")
        llm.completion([{"role": "user", "content": "warm up litellm"}])  # import litellm
        counter["n"] = 0
        llm_time.clear()
        total_start = time.perf_counter()
        step_starts: list[float] = []

        original_step = conv.agent.step

        def timed_step(*args, **kwargs):  # type: ignore[no-untyped-def]
            step_starts.append(time.perf_counter())
            return original_step(*args, **kwargs)

        object.__setattr__(conv.agent, "step", timed_step)
        conv.run()
        total = time.perf_counter() - total_start
        step_ends = [*step_starts[1:], time.perf_counter()]
        conv.close()
    server.close()
    engine = [
        (end - start) - llm
        for start, end, llm in zip(step_starts, step_ends, llm_time, strict=False)
    ]
    first, last = engine[:20], engine[-20:]
    print(
        f"{len(engine)}-step run: engine work {statistics.mean(engine) * 1000:.2f} ms/step "
        f"(steps 1-20: {statistics.mean(first) * 1000:.2f} ms, last 20: "
        f"{statistics.mean(last) * 1000:.2f} ms; LLM call {statistics.mean(llm_time) * 1000:.1f} "
        f"ms/step; total {total:.1f} s)   target <= 3 ms/step, no growth"
    )


TREE_SCRIPT = textwrap.dedent(
    """
    import sys, time, uuid
    from ohtui.sdk import LLM, Agent, Conversation
    base, conv_id = sys.argv[1], uuid.UUID(sys.argv[2])
    def timed(work):
        start = time.perf_counter()
        result = work()
        return result, time.perf_counter() - start
    conv = Conversation(agent=Agent(llm=LLM(model="openai/none"), tools=[]),
                        workspace=base + "/ws", persistence_dir=base + "/convs",
                        conversation_id=conv_id, visualizer=None)
    state = conv.state
    branch, first = timed(state.active_branch)
    _, again = timed(state.active_branch)
    count, middle = len(branch), branch[len(branch) // 2].id
    conv.send_message("one more")
    grown, appended = timed(state.active_branch)
    assert len(grown) == count + 1
    _, navigate = timed(lambda: conv.navigate_to(middle))
    moved, after_navigate = timed(state.active_branch)
    assert len(moved) == count // 2 + 1
    _, sibling = timed(lambda: conv.send_message("a new branch"))
    fork, fork_at = timed(lambda: conv.fork(from_event_id=middle))
    _, fork_branch = timed(lambda: fork.state.active_branch()[-50:])
    fork.close()
    full, fork_all = timed(conv.fork)
    full.close()
    conv.close()
    print(first, again, appended, navigate, after_navigate, sibling, fork_at, fork_branch,
          fork_all)
    """
)


def bench_tree(count: int = 10_000) -> None:
    """The conversation tree's operations on a resumed `count`-event conversation: turns of
    a user message and the agent's answer (a HEAD moved onto a user message looks back to
    the answer before it for actions still waiting)."""
    from ohtui.sdk import LLM, Agent, Conversation, Message, MessageEvent, TextContent

    def said(role: str, text: str) -> MessageEvent:
        source = "user" if role == "user" else "agent"
        return MessageEvent(
            source=source, llm_message=Message(role=role, content=[TextContent(text=text)])
        )

    with tempfile.TemporaryDirectory() as tmp:
        conv = Conversation(
            agent=Agent(llm=LLM(model="openai/none"), tools=[]),
            workspace=f"{tmp}/ws",
            persistence_dir=f"{tmp}/convs",
            visualizer=None,
        )
        with conv.state:  # written behind, grouped: the building is not what is measured
            for i in range(count // 2):
                text = f"message {i}: " + "some realistic text " * 10
                conv.state.append_event(said("user", text), durable=False)
                conv.state.append_event(said("assistant", f"answer {i}"), durable=False)
        conv_id = conv.id
        conv.close()
        out = subprocess.run(
            [sys.executable, "-c", TREE_SCRIPT, tmp, str(conv_id)],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.split()
    ms = [1000 * float(value) for value in out]
    print(
        f"tree of a resumed {count:,}-event conversation: active_branch() first {ms[0]:.1f} ms "
        f"(again {ms[1]:.3f} ms, after an append {ms[2]:.3f} ms); navigate_to halfway "
        f"{ms[3]:.1f} ms, then active_branch() {ms[4]:.1f} ms and a message on the new branch "
        f"{ms[5]:.1f} ms; fork(from_event_id=halfway) {ms[6]:.0f} ms (its branch's last 50: "
        f"{ms[7]:.1f} ms); full fork() {ms[8]:.0f} ms"
    )


if __name__ == "__main__":
    parts = {"import": bench_import, "append": bench_append, "resume": bench_resume}
    parts["steps"] = bench_steps
    parts["tree"] = bench_tree
    for name in sys.argv[1:] or list(parts):
        parts[name]()
