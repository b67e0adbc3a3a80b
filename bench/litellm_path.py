"""The LLM call's own CPU against the history's length, per path (issue 30); run by hand:
`.venv/bin/python bench/litellm_path.py [model ...]`.

For each model (default: `hosted_vllm/test-model` and `anthropic/claude-sonnet-4-5`, both
through litellm's provider code, and `openai/test-model`, called directly), against the
scripted server in this process: the CPU time of the calling thread per `LLM.completion`
(the server's threads are not counted, so other load on the machine matters little), the
median of ten calls, each after a new turn, with a history of 200 and of 4,000 messages.
Which providers take which path: see `bench/long_run.py`.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

THOUGHT = "Checking the next item of the list, and noting what I found about it. " * 2
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "think",
            "description": "Think.",
            "parameters": {"type": "object", "properties": {"thought": {"type": "string"}}},
        },
    }
]
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


def cpu_per_call(model: str, server: Any, size: int) -> float:
    from ohtui.sdk import LLM
    from ohtui.sdk.llm.wire import EncodedMessage

    base = server.base_url
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
    for j in range(12):
        add_turn(history, 10**6 + j)
        started = time.thread_time()
        llm.completion(history, tools=TOOLS)
        cpu.append((time.thread_time() - started) * 1000)
    return statistics.median(cpu[2:])


def main(models: list[str]) -> None:
    from llm_server import Reply, ScriptedLLMServer, ToolCall

    server = ScriptedLLMServer()
    server.set_default(Reply(tool_calls=(ToolCall("think", '{"thought": "x"}'),)))
    print(f"load {os.getloadavg()[0]:.2f}")
    for model in models:
        cpu_per_call(model, server, 2)  # litellm imported, connected
        small, large = cpu_per_call(model, server, 200), cpu_per_call(model, server, 4000)
        print(
            f"{model:30} CPU per call: {small:6.2f} ms at 200 messages, {large:6.2f} ms at "
            f"4,000 (x{large / small:.2f})   target: flat within 2x, <= 10 ms"
        )
    server.close()


if __name__ == "__main__":
    main(sys.argv[1:] or list(MODELS))
