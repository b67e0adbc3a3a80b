"""The LLM call's own CPU against the history's length, per path (issue 30); run by hand:
`.venv/bin/python bench/litellm_path.py [--no-freeze] [model ...]`.

For each model (default: `hosted_vllm/test-model` and `anthropic/claude-sonnet-4-5`, both
through litellm's provider code, and `openai/test-model`, called directly), against the
scripted server in a process of its own (as a provider is: in this process, its parsing of
each 1 MB request would run this process's garbage collector, on the calling thread): the
CPU time of the calling thread per `LLM.completion`, the median of thirty calls, each after
a new turn, with a history of 200 and of 4,000 messages; and the garbage collector's full
passes meanwhile, with litellm's import frozen out of them as in ohtui's programs
(`ohtui.long_lived`; `--no-freeze`: as a program using the engine as a library).
Which providers take which path: see `bench/long_run.py`.
"""

from __future__ import annotations

import gc
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

THOUGHT = "Checking the next item of the list, and noting what I found about it. " * 2
CALLS = 30
"""Calls measured per figure (after two more): their median is the figure."""
MODELS = ("hosted_vllm/test-model", "anthropic/claude-sonnet-4-5", "openai/test-model")


def add_turn(history: list[Any], i: int) -> None:
    from ohtui.sdk.llm.wire import EncodedMessage

    arguments = json.dumps({"thought": f"{i}: {THOUGHT}"})
    function = {"name": "think", "arguments": arguments}
    call = {"id": f"c{i}", "type": "function", "function": function}
    history.append(EncodedMessage({"role": "assistant", "content": None, "tool_calls": [call]}))
    history.append(
        EncodedMessage({"role": "tool", "tool_call_id": f"c{i}", "name": "think", "content": "ok"})
    )


def cpu_per_call(model: str, base: str, size: int) -> float:
    from llm_server import THINK_TOOLS

    from ohtui.sdk import LLM
    from ohtui.sdk.llm.wire import EncodedMessage

    llm = LLM(
        model=model,
        base_url=base.removesuffix("/v1") if model.startswith("anthropic/") else base,
        api_key="sk-bench",
    )
    history: list[Any] = [
        EncodedMessage({"role": "system", "content": "You are an agent. " * 200}),
        EncodedMessage({"role": "user", "content": "think a lot"}),
    ]
    for i in range(size // 2):
        add_turn(history, i)
    cpu = []
    for j in range(CALLS + 2):
        add_turn(history, 10**6 + j)
        started = time.thread_time()
        llm.completion(history, tools=THINK_TOOLS)
        cpu.append((time.thread_time() - started) * 1000)
    return statistics.median(cpu[2:])


def serve() -> None:
    """The scripted server's process: a `think` call for every request, until stdin closes."""
    from llm_server import Reply, ScriptedLLMServer, ToolCall

    server = ScriptedLLMServer()
    server.set_default(Reply(tool_calls=(ToolCall("think", '{"thought": "x"}'),)))
    print(server.base_url, flush=True)
    sys.stdin.read()
    server.close()


class FullCollections:
    """The garbage collector's full passes (generation 2) while it is installed: how many,
    and the longest (a pause of whichever thread allocated, as a UI's would be)."""

    def __init__(self) -> None:
        self.pauses: list[float] = []
        self._started = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if info["generation"] != 2:
            return
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.pauses.append((time.perf_counter() - self._started) * 1000)

    def __enter__(self) -> FullCollections:
        gc.callbacks.append(self)
        return self

    def __exit__(self, *_exc: object) -> None:
        gc.callbacks.remove(self)


def main(models: list[str], freeze: bool) -> None:
    from ohtui.long_lived import own_program

    if freeze:
        own_program()  # as `ohtui`, `ohtui serve` and `ohtui acp` do: litellm's import frozen
    server = subprocess.Popen(
        [sys.executable, __file__, "--serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdout is not None
    base = server.stdout.readline().strip()
    print(f"load {os.getloadavg()[0]:.2f}, litellm's import {'frozen' if freeze else 'not frozen'}")
    for model in models:
        cpu_per_call(model, base, 2)  # litellm imported, connected
        with FullCollections() as full:
            small, large = cpu_per_call(model, base, 200), cpu_per_call(model, base, 4000)
        print(
            f"{model:30} CPU per call: {small:6.2f} ms at 200 messages, {large:6.2f} ms at "
            f"4,000 (x{large / small:.2f})   target: flat within 2x, <= 10 ms"
        )
        longest = max(full.pauses, default=0.0)
        print(f"{'':30} full collections meanwhile: {len(full.pauses)}, longest {longest:.0f} ms")
    server.communicate("")


if __name__ == "__main__":
    if sys.argv[1:] == ["--serve"]:
        serve()
    else:
        names = [a for a in sys.argv[1:] if a != "--no-freeze"]
        main(names or list(MODELS), freeze="--no-freeze" not in sys.argv)
